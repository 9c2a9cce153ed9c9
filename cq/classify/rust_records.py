"""Build ``FileRecords`` for Rust from a tree-sitter tree (one query, one pass).

Definitions: names of fn/struct/enum/union/trait/type/const/static/mod/macro_rules, enum
variants, struct fields, and the self type of an ``impl``. Callsites: the callee of a call
(last path segment or method name) and macro names. Imports: everything in ``use`` and
``extern crate``. Assignments: names bound by let, if/while let, match arm and for patterns
(not ``None`` or ``MAX``: an upper-case name in a pattern is a constant or variant), closure
and fn parameters, assignment left sides. Annotations: type positions, tuple struct fields
included. Scopes: fn, trait, impl, mod, and struct/enum/union (around their fields). Doc
comments (``///``, ``//!``, ``/** */``) are docstrings; ``#[...]`` attributes are code
(references), never comments.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Protocol

from cq.classify.records import FileRecords, RecordsBuilder
from cq.model import Category
from cq.parse.rust_macros import MacroBody, reparse

_QUERY = """
(function_item name: (identifier) @def) @fn_scope
(function_signature_item name: (identifier) @def) @fn_scope
(struct_item name: (type_identifier) @def) @type_scope
(enum_item name: (type_identifier) @def) @type_scope
(union_item name: (type_identifier) @def) @type_scope
(trait_item name: (type_identifier) @def) @trait_scope
(type_item name: (type_identifier) @def)
(associated_type name: (type_identifier) @def)
(const_item name: (identifier) @def)
(static_item name: (identifier) @def)
(mod_item name: (identifier) @def) @mod_scope
(macro_definition name: (identifier) @def)
(enum_variant name: (identifier) @def)
(field_declaration name: (field_identifier) @def)
(impl_item) @impl_scope
(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call))
(call_expression function: (scoped_identifier name: (identifier) @call))
(generic_function function: (identifier) @call)
(generic_function function: (field_expression field: (field_identifier) @call))
(generic_function function: (scoped_identifier name: (identifier) @call))
(macro_invocation macro: (identifier) @macro)
(macro_invocation macro: (scoped_identifier name: (identifier) @macro))
(macro_invocation (token_tree) @macro_body)
(let_declaration pattern: (_) @store)
(for_expression pattern: (_) @store)
(let_condition pattern: (_) @store)
(match_pattern . (_) @store)
(parameter pattern: (_) @param)
(closure_parameters) @closure_params
(assignment_expression left: (_) @store)
(compound_assignment_expr left: (_) @store)
(parameter type: (_) @annotation)
(function_item return_type: (_) @annotation)
(function_signature_item return_type: (_) @annotation)
(let_declaration type: (_) @annotation)
(field_declaration type: (_) @annotation)
(ordered_field_declaration_list type: (_) @annotation)
(const_item type: (_) @annotation)
(static_item type: (_) @annotation)
(type_item type: (_) @annotation)
(type_arguments) @annotation
(trait_bounds) @annotation
(closure_expression return_type: (_) @annotation)
(use_declaration) @import
(extern_crate_declaration) @import
(attribute_item) @attribute
(inner_attribute_item) @attribute
(string_literal) @string
(raw_string_literal) @string
(char_literal) @string
(line_comment) @comment
(block_comment) @comment
(ERROR) @error
"""


def prepare() -> None:
    """Compile the query now (``cq.classify.analyze.ready``)."""
    _query()


@cache
def _query() -> Any:
    import tree_sitter
    import tree_sitter_rust

    return tree_sitter.Query(tree_sitter.Language(tree_sitter_rust.language()), _QUERY)


def build_rust_records(tree: Any, macro_depth: int) -> FileRecords:
    """Records of a Rust file from its tree-sitter tree (macro bodies included, down to
    ``macro_depth`` macros inside macros)."""
    b = RecordsBuilder("rust")
    _collect(b, tree.root_node, None, macro_depth)
    return b.build("::")


class _Recorder(Protocol):
    """Where records go: the ``RecordsBuilder``, or a view of it at a macro body's offset."""

    def token(self, start: int, end: int, category: Category, kind: str) -> None: ...
    def region(self, start: int, end: int, category: Category | None, kind: str) -> None: ...
    def scope(self, start: int, end: int, name: str) -> None: ...


class _Shifted:
    """A ``RecordsBuilder`` seen through a reparsed macro body's offset shift."""

    def __init__(self, builder: RecordsBuilder, shift: int) -> None:
        self._b = builder
        self._shift = shift

    def token(self, start: int, end: int, category: Category, kind: str) -> None:
        self._b.token(start + self._shift, end + self._shift, category, kind)

    def region(self, start: int, end: int, category: Category | None, kind: str) -> None:
        self._b.region(start + self._shift, end + self._shift, category, kind)

    def scope(self, start: int, end: int, name: str) -> None:
        self._b.scope(start + self._shift, end + self._shift, name)


def _collect(b: RecordsBuilder, root: Any, body: MacroBody | None, depth: int) -> None:
    """Record the nodes under ``root``; in a reparsed macro ``body``, only its own nodes, at
    file offsets; ``depth`` more levels of macro bodies may be reparsed."""
    from tree_sitter import QueryCursor

    captures: dict[str, list[Any]] = QueryCursor(_query()).captures(root)
    if body is not None:
        captures = {k: [n for n in v if body.owns(n)] for k, v in captures.items()}
        out: _Recorder = _Shifted(b, body.shift)
    else:
        out = b
    for node in captures.get("def", ()):
        out.token(node.start_byte, node.end_byte, "definition", node.parent.type)
    for label in ("fn_scope", "trait_scope", "mod_scope", "type_scope"):
        for node in captures.get(label, ()):
            name = node.child_by_field_name("name")
            if name is not None:
                out.scope(node.start_byte, node.end_byte, _text(name))
    for node in captures.get("impl_scope", ()):
        _impl(out, node)
    for node in captures.get("call", ()):
        out.token(node.start_byte, node.end_byte, "callsite", "call_expression")
    for node in captures.get("macro", ()):
        out.token(node.start_byte, node.end_byte, "callsite", "macro_invocation")
    for node in captures.get("store", ()):
        _pattern(out, node, "assignment")
    for node in captures.get("param", ()):
        _pattern(out, node, "parameter")
    for node in captures.get("closure_params", ()):
        for child in node.named_children:
            _pattern(out, child.child_by_field_name("pattern") or child, "parameter")
    for node in captures.get("annotation", ()):
        out.region(node.start_byte, node.end_byte, "annotation", "type")
    for node in captures.get("import", ()):
        out.region(node.start_byte, node.end_byte, "import", node.type)
    for node in captures.get("attribute", ()):
        out.region(node.start_byte, node.end_byte, "reference", node.type)
    for node in captures.get("string", ()):
        out.region(node.start_byte, node.end_byte, "string_match", node.type)
    for node in captures.get("comment", ()):
        doc = node.child_by_field_name("doc") is not None or _is_doc_comment(node)
        category = "docstring_match" if doc else "comment_match"
        out.region(node.start_byte, node.end_byte, category, "doc_comment" if doc else node.type)
    if body is None:
        b.error_nodes = len(captures.get("error", ()))
    if depth > 0:
        shift = body.shift if body is not None else 0
        for node in captures.get("macro_body", ()):
            inner = reparse(node, shift)
            if inner is not None:
                _collect(b, inner.tree.root_node, inner, depth - 1)


def _impl(b: _Recorder, node: Any) -> None:
    """``impl Type`` / ``impl Trait for Type`` scope; the self type's name is a definition."""
    self_type = node.child_by_field_name("type")
    trait = node.child_by_field_name("trait")
    if self_type is None:
        return
    name_node = self_type.child_by_field_name("type") if self_type.type == "generic_type" else None
    name_node = name_node or self_type
    if name_node.type == "type_identifier":
        b.token(name_node.start_byte, name_node.end_byte, "definition", "impl_item")
    label = f"impl {_text(trait)} for {_text(name_node)}" if trait else f"impl {_text(name_node)}"
    b.scope(node.start_byte, node.end_byte, label)


def _pattern(b: _Recorder, node: Any, kind: str) -> None:
    """Identifiers bound by a pattern (let, for, parameters) or an assignment's left side."""
    if node is None:
        return
    if node.type == "identifier":
        if not node.text[:1].isupper():  # ``None``, ``MAX``: a constant or variant, no binding
            b.token(node.start_byte, node.end_byte, "assignment", kind)
    elif node.type == "field_expression":
        field = node.child_by_field_name("field")
        if field is not None:
            b.token(field.start_byte, field.end_byte, "assignment", kind)
    elif node.type in (
        "tuple_pattern",
        "mut_pattern",
        "ref_pattern",
        "slice_pattern",
        "tuple_struct_pattern",
        "struct_pattern",
        "field_pattern",
        "captured_pattern",
        "reference_pattern",
        "or_pattern",
    ):
        for child in node.named_children:
            if node.type == "tuple_struct_pattern" and child == node.child_by_field_name("type"):
                continue
            if node.type == "struct_pattern" and child == node.child_by_field_name("type"):
                continue
            _pattern(b, child, kind)
    elif node.type == "shorthand_field_identifier":
        b.token(node.start_byte, node.end_byte, "assignment", kind)


def _is_doc_comment(node: Any) -> bool:
    head = node.text[:3]
    return head in (b"///", b"//!", b"/**", b"/*!") and node.text[:4] not in (b"////", b"/***")


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""
