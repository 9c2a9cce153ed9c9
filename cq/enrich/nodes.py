"""One small node interface over ast-grep and tree-sitter, and how to find the node at a hit.

ast-grep (``SgNode``, character offsets) and tree-sitter (``Node``, byte offsets) parse with
the same grammar, so the structural reading in ``py_structure`` is written once against
``NodeView`` and run on both; the agreement step then compares what the two parses produced.
"""

from __future__ import annotations

from typing import Any, Protocol

import msgspec

from cq.classify import TopLevel
from cq.parse import SourceFile
from cq.parse.syntax import parents
from cq.parse.trees import Lru


class HitSpan(msgspec.Struct, frozen=True):
    """Where a hit is: 0-based row, character columns, and absolute byte offsets."""

    row: int
    col: int
    end_col: int
    byte_start: int
    byte_end: int


class NodeView(Protocol):
    def kind(self) -> str: ...
    def text(self) -> str: ...
    def field(self, name: str) -> NodeView | None: ...
    def parent(self) -> NodeView | None: ...
    def children(self) -> list[NodeView]: ...
    def key(self) -> tuple[int, int, str]: ...
    def head(self, until: NodeView) -> str: ...


class SgView:
    """``NodeView`` over an ast-grep node (offsets in characters)."""

    __slots__ = ("node",)

    def __init__(self, node: Any) -> None:
        self.node = node

    def kind(self) -> str:
        return self.node.kind()

    def text(self) -> str:
        return self.node.text()

    def field(self, name: str) -> SgView | None:
        child = self.node.field(name)
        return SgView(child) if child is not None else None

    def parent(self) -> SgView | None:
        up = self.node.parent()
        return SgView(up) if up is not None else None

    def children(self) -> list[NodeView]:
        return [SgView(c) for c in self.node.children()]

    def key(self) -> tuple[int, int, str]:
        r = self.node.range()
        return (r.start.index, r.end.index, self.node.kind())

    def head(self, until: NodeView) -> str:
        return self.node.text()[: until.key()[0] - self.key()[0]]


class TsView:
    """``NodeView`` over a tree-sitter node (offsets in bytes)."""

    __slots__ = ("node",)

    def __init__(self, node: Any) -> None:
        self.node = node

    def kind(self) -> str:
        return self.node.type

    def text(self) -> str:
        return (self.node.text or b"").decode("utf-8", errors="replace")

    def field(self, name: str) -> TsView | None:
        child = self.node.child_by_field_name(name)
        return TsView(child) if child is not None else None

    def parent(self) -> TsView | None:
        up = self.node.parent
        return TsView(up) if up is not None else None

    def children(self) -> list[NodeView]:
        return [TsView(c) for c in self.node.children]

    def key(self) -> tuple[int, int, str]:
        return (self.node.start_byte, self.node.end_byte, self.node.type)

    def head(self, until: NodeView) -> str:
        data = self.node.text or b""
        return data[: until.key()[0] - self.node.start_byte].decode("utf-8", errors="replace")


def sg_locate(root: Any, span: HitSpan) -> SgView:
    """Innermost ast-grep node containing the hit (descends by (row, column) positions)."""
    start, end = (span.row, span.col), (span.row, span.end_col)
    node = root
    while True:
        inner = None
        for child in node.children():
            r = child.range()
            if (r.start.line, r.start.column) > start:
                break
            if (r.end.line, r.end.column) >= end:
                inner = child
                break
        if inner is None:
            return SgView(node)
        node = inner


def ts_locate(tree: Any, span: HitSpan) -> TsView:
    """Innermost tree-sitter node containing the hit's bytes."""
    return TsView(tree.root_node.descendant_for_byte_range(span.byte_start, span.byte_end))


def statement_of(tree: Any, data: bytes, span: HitSpan) -> tuple[int, int, HitSpan] | None:
    """The whole lines of the top-level statement holding the hit in a tree-sitter ``tree``
    of ``data`` without a syntax error, and the hit's span within them; None when the tree
    has an error, or the hit is outside every statement or after another on its line.

    Parsed alone, such a statement (with those after it on its last line) is the same
    subtree as in the file: ``python -m bench.studies.statement_parse --files 5000 --places
    60`` read the same facts at all 229,587 identifiers and comments sampled in 5,000 files
    of the stdlib and its site-packages. Its bytes are a small share of the file's:
    ``get``'s shown hits on the stdlib are in 160 KB of statements of 917 KB of files."""
    root = tree.root_node
    if root.has_error:
        return None
    node = root.descendant_for_byte_range(span.byte_start, span.byte_end)
    if node is None or node == root:
        return None
    while node.parent is not None and node.parent != root:
        node = node.parent
    row, column = node.start_point
    if column != 0:
        return None
    end = _line_end(data, node.end_byte)
    after = node.next_sibling
    while after is not None and after.start_byte < end:  # ``a = 1; b = (\n 2)``: with b's
        end = max(end, _line_end(data, after.end_byte))
        after = after.next_sibling
    start = node.start_byte
    within = HitSpan(
        row=span.row - row,
        col=span.col,
        end_col=span.end_col,
        byte_start=span.byte_start - start,
        byte_end=span.byte_end - start,
    )
    return start, end, within


def _line_end(data: bytes, pos: int) -> int:
    """Past the newline that ends the line holding ``pos`` (the end of ``data`` if none)."""
    end = data.find(b"\n", pos)
    return len(data) if end < 0 else end + 1


def ancestors(node: NodeView) -> list[NodeView]:
    """Parents of ``node``, innermost first."""
    return parents(node, _parent)


def _parent(node: NodeView) -> NodeView | None:
    return node.parent()


def same(a: NodeView | None, b: NodeView | None) -> bool:
    return a is not None and b is not None and a.key() == b.key()


# The shown files' top-level statements as the slices' line scan reads them: the symbol
# tables' statements (``bindings``) and the stages' (``python``) of the same hits; a search
# shows hits of up to a few dozen files.
_top_levels = Lru(64, "top_level")


def top_level(source: SourceFile) -> TopLevel:
    """``source``'s top-level statements (``cq.classify.TopLevel``), read once a file."""
    top = _top_levels.get(source.digest)
    if top is None:
        top = TopLevel(source.data)
        _top_levels.put(source.digest, top)
    return top
