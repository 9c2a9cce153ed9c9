"""Structural reading of a Python hit from a tree-sitter-python parse (ast-grep or tree-sitter).

In: the innermost node at the hit (a ``NodeView``). Out: ``StructuralFacts`` — what construct
the hit is, the signature and decorators of the definition it names, its scope chain and
class, nearby ancestor kinds, and the call it is the callee of.
"""

from __future__ import annotations

from cq.enrich.facts import StructuralFacts, squash
from cq.enrich.nodes import NodeView, ancestors, same
from cq.parse import python_syntax as py

_SKIP_CONTEXT = {"block", "module"}
_CONTEXT_DEPTH = 3


def structural_facts(node: NodeView, *, with_receiver: bool) -> StructuralFacts:
    """Read the hit at ``node``; ``with_receiver`` also splits a method call's receiver."""
    ups = ancestors(node)
    defined = _defined(node)
    construct, call = _construct(node, ups, defined)
    scopes = [u for u in ups if u.kind() in py.DEFINITIONS and not same(u, defined)]
    classes = [u for u in scopes if u.kind() == "class_definition"]
    receiver = method = None
    if call is not None and with_receiver:
        func = call.field("function")
        if func is not None and func.kind() == "attribute":
            receiver, method = _text(func.field("object")), _text(func.field("attribute"))
    callee = call.field("function") if call is not None else None
    return StructuralFacts(
        construct=construct,
        signature=_signature(defined),
        decorators=_decorators(defined),
        class_context=_name(classes[0]) if classes else None,
        scope_chain=tuple(n for u in reversed(scopes) if (n := _name(u))),
        structural_context=tuple(u.kind() for u in ups if u.kind() not in _SKIP_CONTEXT)[
            :_CONTEXT_DEPTH
        ],
        call_target=squash(callee.text()) if callee is not None else None,
        call_receiver=receiver,
        call_method=method,
    )


def _defined(node: NodeView) -> NodeView | None:
    """The function/class definition or ``type`` alias statement whose name the hit is."""
    up = node.parent()
    if node.kind() != "identifier" or up is None:
        return None
    if up.kind() in py.DEFINITIONS:
        return up if same(up.field("name"), node) else None
    if up.kind() == "generic_type" and same(up.children()[0], node):
        up = up.parent()  # ``type Name[T] = ...``
    alias = up.parent() if up is not None and up.kind() == "type" else None
    if alias is not None and alias.kind() == "type_alias_statement":
        return alias if same(alias.field("left"), up) else None
    return None


def _construct(
    node: NodeView, ups: list[NodeView], defined: NodeView | None
) -> tuple[str, NodeView | None]:
    """What the hit is, and the call whose callee it is (if any)."""
    if defined is not None:
        return py.DEFINITIONS.get(defined.kind(), py.TYPE_ALIAS), None
    kind = node.kind()
    if kind == "comment":
        return py.COMMENT, None
    if kind in py.STRING_PARTS or any(u.kind() == "string" for u in ups[:2]):
        return py.STRING, None
    if any(u.kind() in py.IMPORT_STATEMENTS for u in ups):
        return py.IMPORT, None
    if kind != "identifier":
        return py.OTHER, None
    cur: NodeView = node
    up = node.parent()
    while up is not None and up.kind() == "attribute" and same(up.field("attribute"), cur):
        cur, up = up, up.parent()
    if up is not None and up.kind() == "call" and same(up.field("function"), cur):
        return py.CALL, up
    if any(u.kind() == "decorator" for u in ups[:3]):
        return py.DECORATOR, None
    if _is_parameter_name(node):
        return py.PARAMETER, None
    if any(u.kind() == "type" for u in ups):
        return py.ANNOTATION, None
    assigns = up is not None and up.kind() in ("assignment", "augmented_assignment")
    if assigns and same(up.field("left"), cur):
        return py.ASSIGNMENT_TARGET, None
    if up is not None and up.kind() == "keyword_argument" and same(up.field("name"), cur):
        return py.KEYWORD, None
    return (py.ATTRIBUTE if cur is not node else py.NAME), None


def _is_parameter_name(node: NodeView) -> bool:
    """The identifier names a parameter (not a default value or annotation in it)."""
    cur, up = node, node.parent()
    while up is not None and up.kind() in py.SPLAT_PATTERNS:
        cur, up = up, up.parent()
    if up is None:
        return False
    if up.kind() in py.PARAMETER_LISTS:
        return True
    return up.kind() in py.NAMED_PARAMETERS and same(up.children()[0], cur)


def _signature(defined: NodeView | None) -> str | None:
    """The definition's header as written, ``def`` to the colon (lines keep their indent); a
    type alias whole."""
    if defined is None:
        return None
    body = defined.field("body")
    head = defined.head(body) if body is not None else defined.text()
    return head.rstrip() or None


def _decorators(defined: NodeView | None) -> tuple[str, ...]:
    up = defined.parent() if defined is not None else None
    if up is None or up.kind() != "decorated_definition":
        return ()
    return tuple(squash(c.text()).lstrip("@ ") for c in up.children() if c.kind() == "decorator")


def _name(node: NodeView) -> str | None:
    return _text(node.field("name"))


def _text(node: NodeView | None) -> str | None:
    return squash(node.text()) if node is not None else None
