"""Rust enrichment from tree-sitter: the item a hit names (or sits in) and its surroundings.

In: the Rust file and the hit's span. Out: an ``Enrichment`` with the shared structural fields
(construct, signature, scope chain, call) and ``RustFacts``: item kind, visibility, generics,
where clause, attributes (derive, ``cfg(test)``, ``#[test]``), impl target and trait, macro,
enclosing inline module. One stage, fail-open like the Python ones.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from cq.enrich.facts import squash
from cq.enrich.nodes import HitSpan, NodeView, TsView, same
from cq.enrich.parse_quality import parse_quality
from cq.enrich.stages import StageRunner
from cq.model import CallFacts, Enrichment, ParseQuality, RustFacts
from cq.parse import SourceFile, ts_tree
from cq.parse.rust_macros import reparse
from cq.parse.rust_syntax import (
    COMMENTS,
    DOC_COMMENT_KINDS,
    ITEMS,
    SCOPE_ITEMS,
    STRING_KINDS,
    TEST_ATTRIBUTE,
    is_cfg_test,
)
from cq.parse.syntax import parents

_BODY_FIELDS = ("body", "value")
_CALLEE_PARENTS = {
    "scoped_identifier": "name",
    "field_expression": "field",
    "generic_function": "function",
}
_SKIP_CONTEXT = {"block", "declaration_list", "source_file", "token_tree"}
_DERIVE = re.compile(r"^#\[derive\((.*)\)\]$")


def enrich_rust(
    source: SourceFile, span: HitSpan, runner: StageRunner, macro_depth: int
) -> Enrichment:
    found = runner.run("tree_sitter", lambda: _read(source, span, macro_depth))
    if found is None:
        return Enrichment(
            status=runner.status(),
            stages=runner.stage_status(),
            degrade_reasons=tuple(runner.reasons),
        )
    enrichment, quality = found
    return msgspec.structs.replace(
        enrichment,
        status=runner.status(),
        parse_quality=quality if quality != ParseQuality() else None,
        stages=runner.stage_status(),
        degrade_reasons=tuple(runner.reasons),
    )


def _read(source: SourceFile, span: HitSpan, macro_depth: int) -> tuple[Enrichment, ParseQuality]:
    tree = ts_tree(source)
    node, ups = _locate(tree, span, macro_depth)
    defined = _defined(node)
    item = defined
    scopes = [u for u in ups if u.kind() in SCOPE_ITEMS and not same(u, defined)]
    functions = [
        u for u in ([defined] if defined else []) + ups if u and u.kind() == "function_item"
    ]
    impl = next((u for u in ups if u.kind() == "impl_item"), None)
    macro = next((u for u in [node, *ups] if u.kind() == "macro_invocation"), None)
    call, target = _call(node)
    attrs = _attributes(item) if item is not None else ()
    enclosing_attrs = [a for u in [item, *ups] if u is not None for a in _attributes(u)]
    rust = RustFacts(
        item_kind=item.kind() if item is not None else None,
        visibility=_child_text(item, "visibility_modifier"),
        generics=_field_text(item, "type_parameters"),
        where_clause=_child_text(item, "where_clause"),
        attributes=attrs,
        derives=tuple(d for a in attrs if (m := _DERIVE.match(a)) for d in _split(m.group(1))),
        cfg_test=any(is_cfg_test(a) for a in enclosing_attrs),
        is_test=bool(functions) and any(TEST_ATTRIBUTE.match(a) for a in _attributes(functions[0])),
        impl_target=_field_text(impl, "type"),
        impl_trait=_field_text(impl, "trait"),
        macro=_field_text(macro, "macro"),
        module="::".join(n for u in reversed(ups) if u.kind() == "mod_item" and (n := _name(u)))
        or None,
    )
    enrichment = Enrichment(
        status="applied",  # replaced by the runner's verdict
        construct=_construct(node, ups, defined, call, macro),
        signature=_signature(item),
        scope_chain=tuple(s for u in reversed(scopes) if (s := _scope_name(u))),
        structural_context=tuple(u.kind() for u in ups if u.kind() not in _SKIP_CONTEXT)[:4],
        call=_call_facts(target) if call is not None else None,
        rust=rust,
    )
    return enrichment, parse_quality(tree, node, "rust")


def _locate(tree: Any, span: HitSpan, macro_depth: int) -> tuple[NodeView, list[NodeView]]:
    """The hit's node and its ancestors (innermost first), read inside the bodies of the
    macros around it that parse as Rust (``cq.parse.rust_macros``)."""
    node = tree.root_node.descendant_for_byte_range(span.byte_start, span.byte_end)
    ups = parents(node, _ts_parent)
    own, shift = len(ups), 0  # ancestors in the innermost tree read so far; its offset
    for _ in range(macro_depth):
        i = next((i for i, u in enumerate(ups[:own]) if u.type == "macro_invocation"), 0)
        body = reparse(ups[i - 1], shift) if i and ups[i - 1].type == "token_tree" else None
        if body is None:
            break
        inner = body.tree.root_node.descendant_for_byte_range(
            span.byte_start - body.shift, span.byte_end - body.shift
        )
        if inner is None or not body.owns(inner):
            break
        inner_ups = [u for u in parents(inner, _ts_parent) if body.owns(u)]
        node, ups, own, shift = inner, inner_ups + ups[i:], len(inner_ups), body.shift
    return TsView(node), [TsView(u) for u in ups]


def _ts_parent(node: Any) -> Any:
    return node.parent


def _defined(node: NodeView) -> NodeView | None:
    up = node.parent()
    if up is not None and up.kind() in ITEMS and same(up.field("name"), node):
        return up
    return None


def _construct(node: NodeView, ups: list[NodeView], defined: Any, call: Any, macro: Any) -> str:
    if defined is not None:
        return ITEMS[defined.kind()]
    if any(u.kind() == "use_declaration" for u in ups):
        return "use"
    if macro is not None and same(macro.field("macro"), node):
        return "macro_call"
    if call is not None:
        return "call"
    if any(u.kind() == "attribute_item" for u in ups):
        return "attribute"
    if node.kind() in DOC_COMMENT_KINDS:
        return "comment"
    if node.kind() in STRING_KINDS:
        return "string"
    return "type" if node.kind() == "type_identifier" else "name"


def _call(node: NodeView) -> tuple[NodeView | None, NodeView | None]:
    """The call whose callee ends at the hit, and that callee expression."""
    cur, up = node, node.parent()
    while up is not None:
        field = _CALLEE_PARENTS.get(up.kind())
        if field is None or not same(up.field(field), cur):
            break
        cur, up = up, up.parent()
    if up is not None and up.kind() == "call_expression" and same(up.field("function"), cur):
        return up, cur
    return None, None


def _call_facts(target: NodeView | None) -> CallFacts | None:
    if target is None:
        return None
    inner = target.field("function") if target.kind() == "generic_function" else target
    receiver = method = None
    if inner is not None and inner.kind() == "field_expression":
        receiver, method = _text(inner.field("value")), _text(inner.field("field"))
    return CallFacts(target=squash(target.text()), receiver=receiver, method=method)


def _signature(item: NodeView | None) -> str | None:
    """The item's header as written, up to its body or value (lines keep their indent); a
    tuple struct or variant keeps its fields."""
    if item is None:
        return None
    if item.kind() == "macro_definition":  # its rules are its body
        return f"macro_rules! {_name(item)}"
    body = next((b for f in _BODY_FIELDS if (b := item.field(f)) is not None), None)
    if body is not None and body.kind() == "ordered_field_declaration_list":
        body = item.field("value")  # a tuple struct's or variant's fields are its signature
    head = item.head(body) if body is not None else item.text()
    return head.rstrip().removesuffix("=").removesuffix(";").rstrip() or None


def _attributes(item: NodeView) -> tuple[str, ...]:
    """``#[...]`` attributes directly above ``item`` (comments between them are skipped)."""
    up = item.parent()
    if up is None:
        return ()
    siblings = up.children()
    index = next((i for i, s in enumerate(siblings) if same(s, item)), 0)
    found: list[str] = []
    for sibling in reversed(siblings[:index]):
        if sibling.kind() == "attribute_item":
            found.append(squash(sibling.text()))
        elif sibling.kind() not in COMMENTS:
            break
    return tuple(reversed(found))


def _scope_name(node: NodeView) -> str | None:
    if node.kind() == "impl_item":
        target, trait = _field_text(node, "type"), _field_text(node, "trait")
        return f"impl {trait} for {target}" if trait else f"impl {target}"
    return _name(node)


def _split(derives: str) -> list[str]:
    return [d.strip() for d in derives.split(",") if d.strip()]


def _name(node: NodeView) -> str | None:
    return _text(node.field("name"))


def _field_text(node: NodeView | None, field: str) -> str | None:
    return _text(node.field(field)) if node is not None else None


def _child_text(node: NodeView | None, kind: str) -> str | None:
    if node is None:
        return None
    return next((squash(c.text()) for c in node.children() if c.kind() == kind), None)


def _text(node: NodeView | None) -> str | None:
    return squash(node.text()) if node is not None else None
