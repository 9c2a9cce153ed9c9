"""Item roles from path conventions: src, test, doc or lib, on normalised relative paths."""

from __future__ import annotations

import posixpath

from cq.model import Role

_LIB_DIRS = frozenset(
    {
        "site-packages",
        "dist-packages",
        "vendor",
        "vendored",
        "_vendor",
        "third_party",
        "third-party",
        "thirdparty",
        "node_modules",
        ".venv",
        "venv",
    }
)
_TEST_DIRS = frozenset({"test", "tests", "benches", "testing_utils"})
_DOC_DIRS = frozenset({"doc", "docs", "example", "examples"})
_DOC_SUFFIXES = (".md", ".rst", ".txt")


def normalise(path: str) -> str:
    """POSIX separators, no ``./`` or ``..`` detours, no leading slash."""
    clean = posixpath.normpath(path.replace("\\", "/"))
    return clean.lstrip("/") if clean != "." else ""


def path_role(path: str) -> Role:
    """The role a file plays, judged from its relative path alone.

    Vendored code is ``lib`` even when it holds tests (it is not the project's code); then
    test directories (``tests/``, ``test/``, ``*_test/``, Rust ``benches/``) and test file
    names (``test_*.py``, ``*_test.py``, ``*_tests.rs``, ``conftest.py``); then docs and examples.
    """
    parts = normalise(path).lower().split("/")
    dirs, name = parts[:-1], parts[-1]
    if any(d in _LIB_DIRS for d in dirs):
        return "lib"
    if any(d in _TEST_DIRS or d.endswith(("_test", "_tests")) for d in dirs) or _is_test_file(name):
        return "test"
    if any(d in _DOC_DIRS for d in dirs) or name.endswith(_DOC_SUFFIXES):
        return "doc"
    return "src"


def _is_test_file(name: str) -> bool:
    stem, _, _ = name.rpartition(".")
    return (
        name == "conftest.py"
        or stem.startswith("test_")
        or stem.endswith(("_test", "_tests"))
        or stem in ("tests", "test")
    )
