"""Rust items under ``#[cfg(test)]``: their line ranges, so hits inside them count as tests,
and module files their parent declares ``#[cfg(test)] mod name;`` (mocks, fixtures).

Only files that contain the text ``cfg(test)`` are parsed (tree-sitter, via ``cq.parse``), once
per content (the ranges are cached); a parent module is read as text. Every file comes from
the search's ``Corpus``.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from pathlib import PurePosixPath
from typing import Any

from cq.cache.payloads import PayloadCache
from cq.confine import inside
from cq.parse import Corpus, ts_tree

_CONTAINERS = frozenset({"source_file", "declaration_list"})
_COMMENTS = frozenset({"line_comment", "block_comment"})


Ranges = tuple[tuple[int, int], ...]


def cfg_test_ranges(corpus: Corpus, rels: list[str], use_cache: bool) -> dict[str, Ranges]:
    """For each file, the 1-based inclusive (first, last) line ranges of its items marked
    ``#[cfg(test)]``. Kept in cq's cache by content hash: a warm search parses nothing."""
    sources = {rel: corpus.source(rel, "rust") for rel in rels}
    wanted: dict[str, list[str]] = defaultdict(list)
    for rel, source in sources.items():
        if source is not None and b"cfg(test)" in source.data:
            wanted[source.digest].append(rel)
    store = PayloadCache("cfgtest", Ranges, ("cq.rank.rust_tests",), enabled=use_cache)
    found = store.get_many(wanted) if wanted else {}
    out: dict[str, Ranges] = {rel: () for rel in rels}
    for digest, files in wanted.items():
        if digest not in found:
            ranges: list[tuple[int, int]] = []
            _collect(ts_tree(sources[files[0]]).root_node, ranges)  # type: ignore[arg-type]
            found[digest] = tuple(ranges)
            store.add(digest, found[digest])
        out.update(dict.fromkeys(files, found[digest]))
    store.flush()
    for rel in rels:
        corpus.release(rel)
    return out


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


def declared_under_cfg_test(corpus: Corpus, rel: str) -> bool:
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
        # Its directory came from rg's walk, which follows no link; the file itself may be
        # a link, and one leading out of the tree is not read (cq.confine).
        path = corpus.root / parent
        if path.is_symlink() and not inside(os.path.realpath(corpus.root), str(path)):
            continue
        source = corpus.source(parent.as_posix(), "rust")
        if source is None:
            continue
        corpus.release(parent.as_posix())
        data = source.data
        if b"test" in data and any(_is_cfg_test(m[1]) for m in declaration.finditer(data)):
            return True
    return False


def in_ranges(line: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(first <= line <= last for first, last in ranges)
