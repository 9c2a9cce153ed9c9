"""Build ``FileRecords`` for Python from a tree-sitter tree (one query, one pass).

Roles follow CPython's ``ast`` contexts: a name in Store context is an assignment (targets of
=, augmented and annotated assignment, for, with-as, except-as, walrus, comprehensions), a
parameter name is an assignment of kind ``parameter``, the callee of a call (the last name in
``a.b.c()``) and a decorator name are callsites, the name of def/class and of a ``type X = ...``
alias is a definition.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from functools import cache
from typing import Any

from cq.classify.records import FileRecords, RecordsBuilder
from cq.parse.python_syntax import PARAMETER_WRAPPERS, UNPACKING_TARGETS

_QUERY = """
(function_definition name: (identifier) @def) @scope
(class_definition name: (identifier) @def) @scope
(type_alias_statement left: (type (identifier) @def))
(type_alias_statement left: (type (generic_type . (identifier) @def)))
(call function: (identifier) @call)
(call function: (attribute attribute: (identifier) @call))
(call function: (list_splat (identifier) @call))
(call function: (list_splat (attribute attribute: (identifier) @call)))
(decorator (identifier) @decorator)
(decorator (attribute attribute: (identifier) @decorator))
(assignment left: (_) @store)
(augmented_assignment left: (_) @store)
(for_statement left: (_) @store)
(for_in_clause left: (_) @store)
(as_pattern_target) @store
(named_expression name: (identifier) @store)
(case_pattern . (dotted_name . (identifier) @capture .) .)
(keyword_pattern (dotted_name . (identifier) @capture .))
(splat_pattern (identifier) @capture)
(as_pattern (case_pattern) (identifier) @capture)
(parameters) @params
(lambda_parameters) @params
(type) @annotation
(import_statement) @import
(future_import_statement) @from_import
(import_from_statement) @from_import
(expression_statement (string) @string_stmt)
(expression_statement (concatenated_string) @string_stmt)
(string) @string
(interpolation) @hole
(format_expression) @hole
(format_specifier) @format_spec
(comment) @comment
(ERROR) @error
"""


def prepare() -> None:
    """Compile the query now (``cq.classify.analyze.ready``)."""
    _query()


@cache
def _query() -> Any:
    import tree_sitter
    import tree_sitter_python

    return tree_sitter.Query(tree_sitter.Language(tree_sitter_python.language()), _QUERY)


def build_python_records(tree: Any, within: list[tuple[int, int]] | None = None) -> FileRecords:
    """Records of a Python file from its tree-sitter tree; with ``within`` (byte spans of the
    tree), only of the query matches that overlap them (a lookup inside a span finds every
    record it would find in the whole file's: what contains or starts in the span)."""
    from tree_sitter import QueryCursor

    cursor = QueryCursor(_query())
    if within is None:
        captures: dict[str, list[Any]] = cursor.captures(tree.root_node)
    else:
        captures = {}
        for start, end in within:
            cursor.set_byte_range(start, end)
            for name, nodes in cursor.captures(tree.root_node).items():
                captures.setdefault(name, []).extend(nodes)
    b = RecordsBuilder("python")
    for node in captures.get("def", ()):
        b.token(node.start_byte, node.end_byte, "definition", node.parent.type)
    for node in captures.get("scope", ()):
        name = node.child_by_field_name("name")
        if name is not None:
            b.scope(node.start_byte, node.end_byte, name.text.decode("utf-8", "replace"))
    b.tokens_of(captures.get("call", []), "callsite", "call")
    b.tokens_of(captures.get("decorator", []), "callsite", "decorator")
    b.tokens_of([n for n in captures.get("capture", ()) if n.text != b"_"], "assignment", "capture")
    for node in captures.get("store", ()):
        _store_targets(b, node)
    for node in captures.get("params", ()):
        _parameters(b, node)
    b.regions_of(captures.get("annotation", []), "annotation", "type")
    b.regions_of(captures.get("import", []), "import", "import_statement")
    b.regions_of(captures.get("from_import", []), "from_import", "import_from_statement")
    docstrings = [n for n in captures.get("string_stmt", ()) if _is_docstring(n)]
    b.regions_of(docstrings, "docstring_match", "docstring")
    in_docstring = _span_test([(n.start_byte, n.end_byte) for n in docstrings])
    strings = [n for n in captures.get("string", ()) if not in_docstring(n.start_byte)]
    b.regions_of(strings, "string_match", "string")
    b.regions_of(captures.get("hole", []), None, "interpolation")
    b.regions_of(captures.get("format_spec", []), "string_match", "format_specifier")
    b.regions_of(captures.get("comment", []), "comment_match", "comment")
    b.error_nodes = len(captures.get("error", ()))
    return b.build(".")


def _span_test(spans: list[tuple[int, int]]) -> Callable[[int], bool]:
    """Whether a byte offset falls in one of ``spans`` (disjoint), by bisection: a file has
    thousands of strings and hundreds of docstrings."""
    spans.sort()
    starts = [a for a, _ in spans]

    def inside(offset: int) -> bool:
        i = bisect_right(starts, offset) - 1
        return i >= 0 and offset < spans[i][1]

    return inside


def _store_targets(b: RecordsBuilder, node: Any) -> None:
    """Names bound by an assignment target: not the object of ``a.x`` nor of ``a[i]``."""
    kind = node.type
    if kind == "identifier":
        b.token(node.start_byte, node.end_byte, "assignment", "assignment")
    elif kind == "attribute":
        attr = node.child_by_field_name("attribute")
        if attr is not None:
            b.token(attr.start_byte, attr.end_byte, "assignment", "attribute_assignment")
    elif kind in UNPACKING_TARGETS:
        for child in node.named_children:
            _store_targets(b, child)


def _parameters(b: RecordsBuilder, params: Any) -> None:
    for child in params.named_children:
        node = child
        if node.type in PARAMETER_WRAPPERS:
            name = node.child_by_field_name("name")
            node = name if name is not None else _first_identifier(node)
        if node is not None and node.type == "identifier":
            b.token(node.start_byte, node.end_byte, "assignment", "parameter")


def _first_identifier(node: Any) -> Any:
    for child in node.named_children:
        if child.type == "identifier":
            return child
        if child.type in PARAMETER_WRAPPERS:
            return _first_identifier(child)
    return None


def _is_docstring(string_node: Any) -> bool:
    """First statement of a module, class or function body, as CPython's ``ast`` defines it
    (implicitly concatenated strings count, unless a part is an f-string)."""
    parts = (
        string_node.named_children if string_node.type == "concatenated_string" else [string_node]
    )
    for part in parts:
        start = part.child(0)
        if start is not None and b"f" in start.text.lower():
            return False  # an f-string is never a docstring
    stmt = string_node.parent
    if stmt is None or stmt.named_child_count != 1:
        return False
    body = stmt.parent
    if body is None:
        return False
    if body.type == "block":
        owner = body.parent
        if owner is None or owner.type not in ("function_definition", "class_definition"):
            return False
    elif body.type != "module":
        return False
    for child in body.named_children:
        if child.type == "comment":
            continue
        return child.id == stmt.id
    return False
