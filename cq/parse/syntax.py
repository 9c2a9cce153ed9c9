"""Syntax facts every language shares: walking up a tree, and which paths hold test code.

The per-language facts (node kinds, construct names, test attributes) are in
``python_syntax.py`` and ``rust_syntax.py``; classification, enrichment, ranking and the
rewriter all read them from there, so a rule is written once.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import TypeVar

N = TypeVar("N")

# Directories of tests and their helpers (Rust ``benches/`` included), and test file stems.
TEST_DIRS = frozenset({"test", "tests", "testing", "benches", "testing_utils"})
TEST_STEMS = frozenset({"test", "tests", "conftest"})


def parents(node: N, parent_of: Callable[[N], N | None]) -> list[N]:
    """``node``'s ancestors, innermost first, following ``parent_of`` (a tree-sitter node's
    ``.parent``, an ast-grep node's ``parent()``, a LibCST parent map's ``get``)."""
    out: list[N] = []
    up = parent_of(node)
    while up is not None:
        out.append(up)
        up = parent_of(up)
    return out


def normalise(path: str) -> str:
    """POSIX separators, no ``./`` or ``..`` detours, no leading slash."""
    clean = posixpath.normpath(path.replace("\\", "/"))
    return clean.lstrip("/") if clean != "." else ""


def is_test_path(path: str) -> bool:
    """Whether a relative path is test code by convention: under a test directory
    (``tests/``, ``test/``, ``testing/``, ``*_test/``, ``*_tests/``, Rust ``benches/``) or a
    test file (``test_*.py``, ``*_test.py``, ``*_tests.rs``, ``conftest.py``, ``tests.rs``)."""
    parts = normalise(path).lower().split("/")
    dirs, name = parts[:-1], parts[-1]
    if any(d in TEST_DIRS or d.endswith(("_test", "_tests")) for d in dirs):
        return True
    stem = name.rpartition(".")[0] or name
    return stem in TEST_STEMS or stem.startswith("test_") or stem.endswith(("_test", "_tests"))
