"""Rust items under ``#[cfg(test)]``: their line ranges, so hits inside them count as tests,
and module files their parent declares ``#[cfg(test)] mod name;`` (mocks, fixtures).

Only files whose text may hold a ``#[cfg(...)]`` on ``test`` are parsed (tree-sitter, via
``cq.parse``), once per content (the ranges are cached); a parent module is read as text.
What counts as test code is ``cq.parse.rust_syntax``'s rule. Every file comes from the
search's ``Corpus``.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from pathlib import PurePosixPath

from cq.cache.payloads import PayloadCache
from cq.confine import inside
from cq.parse import Corpus, ts_tree
from cq.parse.rust_syntax import cfg_test_items, is_cfg_test, may_hold_cfg_test

Ranges = tuple[tuple[int, int], ...]


def cfg_test_ranges(corpus: Corpus, rels: list[str], use_cache: bool) -> dict[str, Ranges]:
    """For each file, the 1-based inclusive (first, last) line ranges of its items marked
    ``#[cfg(test)]``. Kept in cq's cache by content hash: a warm search parses nothing."""
    sources = {rel: corpus.source(rel, "rust") for rel in rels}
    wanted: dict[str, list[str]] = defaultdict(list)
    for rel, source in sources.items():
        if source is not None and may_hold_cfg_test(source.data):
            wanted[source.digest].append(rel)
    store = PayloadCache("cfgtest", Ranges, ("cq.rank.rust_tests",), enabled=use_cache)
    found = store.get_many(wanted) if wanted else {}
    out: dict[str, Ranges] = {rel: () for rel in rels}
    for digest, files in wanted.items():
        if digest not in found:
            tree = ts_tree(sources[files[0]])  # type: ignore[arg-type]
            found[digest] = tuple(cfg_test_items(tree.root_node))
            store.add(digest, found[digest])
        out.update(dict.fromkeys(files, found[digest]))
    store.flush()
    for rel in rels:
        corpus.release(rel)
    return out


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
    # a name that is not UTF-8 as its bytes (no Rust source can declare it, none fails)
    declaration = re.compile(
        rb"(#\[cfg\([^\]]*\)\])\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+"
        + re.escape(os.fsencode(name))
        + rb"\s*;"
    )
    for parent in parents:
        # Its directory came from rg's walk, which follows no link; the file itself may be
        # a link, and one leading out of the tree is not read (cq.confine).
        path = corpus.root / parent
        if path.is_symlink() and not inside(str(corpus.root), str(path)):
            continue
        source = corpus.source(parent.as_posix(), "rust")
        if source is None:
            continue
        corpus.release(parent.as_posix())
        data = source.data
        if b"test" in data and any(is_cfg_test(m[1]) for m in declaration.finditer(data)):
            return True
    return False


def in_ranges(line: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(first <= line <= last for first, last in ranges)
