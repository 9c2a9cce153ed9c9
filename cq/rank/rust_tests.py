"""Rust items under ``#[cfg(test)]``: their line ranges, so hits inside them count as tests,
and module files their parent declares ``#[cfg(test)] mod name;`` (mocks, fixtures).

Only files that contain the text ``cfg(test)`` are parsed (tree-sitter, via ``cq.parse``);
a parent module is read as text.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any

from cq.parse import load_source, ts_tree

_CONTAINERS = frozenset({"source_file", "declaration_list"})
_COMMENTS = frozenset({"line_comment", "block_comment"})


def cfg_test_ranges(root: Path, rel: str) -> tuple[tuple[int, int], ...]:
    """1-based inclusive (first, last) line ranges of the items marked ``#[cfg(test)]``."""
    source = load_source(root, rel, "rust")
    if source is None or b"cfg(test)" not in source.data:
        return ()
    ranges: list[tuple[int, int]] = []
    _collect(ts_tree(source).root_node, ranges)
    return tuple(ranges)


def _collect(node: Any, ranges: list[tuple[int, int]]) -> None:
    """Walk item lists (the file, module and impl bodies); attributes precede their item."""
    pending_start: int | None = None
    for child in node.named_children:
        if child.type == "attribute_item":
            if _is_cfg_test(child.text):
                pending_start = child.start_point[0] + 1 if pending_start is None else pending_start
            continue
        if child.type in _COMMENTS:
            continue
        if pending_start is not None:
            ranges.append((pending_start, child.end_point[0] + 1))
            pending_start = None
            continue
        for grandchild in child.named_children:
            if grandchild.type in _CONTAINERS:
                _collect(grandchild, ranges)


def _is_cfg_test(text: bytes) -> bool:
    compact = b"".join(text.split())
    return compact.startswith(b"#[cfg(") and b"test" in compact and b"not(test" not in compact


def declared_under_cfg_test(root: Path, rel: str) -> bool:
    """Whether the module in file ``rel`` is declared ``#[cfg(test)] mod name;`` by its parent
    (``mod.rs``, ``lib.rs`` or ``main.rs`` beside it, or ``dir.rs`` for ``dir/name.rs``)."""
    path = PurePosixPath(rel)
    if path.stem in ("lib", "main"):
        return False
    own = path.parent if path.stem == "mod" else path
    name, folder = own.stem, own.parent
    parents = [folder / f for f in ("mod.rs", "lib.rs", "main.rs")]
    if folder.name:
        parents.append(folder.with_suffix(".rs"))
    declaration = re.compile(
        rb"(#\[cfg\([^\]]*\)\])\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+"
        + re.escape(name.encode())
        + rb"\s*;"
    )
    for parent in parents:
        try:
            data = (root / parent).read_bytes()
        except OSError:
            continue
        if b"test" in data and any(_is_cfg_test(m[1]) for m in declaration.finditer(data)):
            return True
    return False


def in_ranges(line: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(first <= line <= last for first, last in ranges)
