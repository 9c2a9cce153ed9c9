"""Rust syntax facts, written once: tree-sitter-rust node kinds, construct names, the
keywords that start an item, and which code is test code (``#[cfg(test)]``, ``#[test]``).

Classification (the node tier, the line heuristic), enrichment, ranking (test roles) and the
rewriter's vocabulary read these tables.
"""

from __future__ import annotations

import re
from typing import Any

from cq.model import Category

# Items that define a name, and the construct each is (``Enrichment.construct``).
ITEMS = {
    "function_item": "function_def",
    "function_signature_item": "function_def",
    "struct_item": "struct_def",
    "enum_item": "enum_def",
    "union_item": "union_def",
    "trait_item": "trait_def",
    "mod_item": "mod_def",
    "const_item": "const_def",
    "static_item": "static_def",
    "type_item": "type_def",
    "macro_definition": "macro_def",
    "associated_type": "type_def",
    "enum_variant": "variant_def",
    "field_declaration": "field_def",
}
# Items whose body is a scope of the names inside it.
SCOPE_ITEMS = frozenset(
    {
        "function_item",
        "trait_item",
        "impl_item",
        "mod_item",
        "struct_item",
        "enum_item",
        "union_item",
    }
)
ITEM_LISTS = frozenset({"source_file", "declaration_list"})  # where items (and attributes) sit
COMMENTS = frozenset({"line_comment", "block_comment"})
DOC_COMMENT_KINDS = frozenset({"line_comment", "block_comment", "doc_comment"})
STRING_KINDS = frozenset({"string_content", "string_literal", "raw_string_literal"})
# The construct around a piece of text that is not one identifier (the node tier).
NODE_CATEGORIES: dict[str, Category] = {
    "call_expression": "callsite",
    "macro_invocation": "callsite",
    "function_item": "definition",
    "struct_item": "definition",
    "enum_item": "definition",
    "trait_item": "definition",
    "let_declaration": "assignment",
    "assignment_expression": "assignment",
    "use_declaration": "import",
}

# Source text: the keywords that open an item definition (after ``pub``, ``async``, ...).
ITEM_KEYWORDS = ("fn", "struct", "enum", "trait", "type", "union", "mod", "static", "const")

TEST_ATTRIBUTE = re.compile(r"^#\[(?:[A-Za-z_]\w*::)*test\]$")  # #[test], #[tokio::test]
_CFG = re.compile(rb"#\s*\[\s*cfg\s*\(")
_TOKEN = re.compile(r"\s*(?:(?P<word>[A-Za-z_]\w*)|(?P<string>\"(?:[^\"\\]|\\.)*\")|(?P<punct>.))")


def is_cfg_test(attribute: str | bytes) -> bool:
    """Whether ``#[cfg(...)]`` compiles its item only in test builds: its predicate implies
    ``test`` (``test``; ``all(..)`` with such a part; ``any(..)`` of only such parts; never
    under ``not``). ``cfg(any(test, unix))`` is built outside tests too: not test code."""
    text = attribute.decode("utf-8", "replace") if isinstance(attribute, bytes) else attribute
    compact = "".join(text.split())
    if not (compact.startswith("#[cfg(") and compact.endswith(")]")):
        return False
    tokens = [m.group().strip() for m in _TOKEN.finditer(compact[len("#[cfg(") : -len(")]")])]
    implied, end = _implies_test([t for t in tokens if t], 0)
    return implied and end == len([t for t in tokens if t])


def _implies_test(tokens: list[str], at: int) -> tuple[bool, int]:
    """Whether the predicate starting at ``tokens[at]`` implies ``test``; where it ends."""
    if at >= len(tokens):
        return False, at
    word = tokens[at]
    if at + 1 < len(tokens) and tokens[at + 1] == "(" and word in ("all", "any", "not"):
        parts: list[bool] = []
        at += 2
        while at < len(tokens) and tokens[at] != ")":
            part, at = _implies_test(tokens, at)
            parts.append(part)
            if at < len(tokens) and tokens[at] == ",":
                at += 1
        at += 1  # the closing parenthesis
        if word == "all":
            return any(parts), at
        if word == "any":
            return bool(parts) and all(parts), at
        return False, at  # not(...)
    if at + 2 < len(tokens) and tokens[at + 1] == "=":  # key = "value"
        return False, at + 3
    return word == "test", at + 1


def may_hold_cfg_test(data: bytes) -> bool:
    """A cheap look at a file's bytes: could any ``#[cfg(...)]`` in it mention ``test``?"""
    return b"test" in data and _CFG.search(data) is not None


def cfg_test_items(root: Any) -> list[tuple[int, int]]:
    """1-based inclusive (first, last) line ranges of the items marked ``#[cfg(test)]`` in a
    tree-sitter-rust tree (the file, module and impl bodies; attributes precede their item,
    comments between them are skipped)."""
    ranges: list[tuple[int, int]] = []
    _collect(root, ranges)
    return ranges


def _collect(node: Any, ranges: list[tuple[int, int]]) -> None:
    pending_start: int | None = None
    for child in node.named_children:
        if child.type == "attribute_item":
            if is_cfg_test(child.text):
                pending_start = child.start_point[0] + 1 if pending_start is None else pending_start
            continue
        if child.type in COMMENTS:
            continue
        if pending_start is not None:
            ranges.append((pending_start, child.end_point[0] + 1))
            pending_start = None
            continue
        for grandchild in child.named_children:
            if grandchild.type in ITEM_LISTS:
                _collect(grandchild, ranges)
