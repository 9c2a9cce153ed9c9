"""Item roles from path conventions: src, test, doc or lib, on normalised relative paths."""

from __future__ import annotations

from cq.model import Role
from cq.parse.syntax import is_test_path, normalise

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
_DOC_DIRS = frozenset({"doc", "docs", "example", "examples"})
_DOC_SUFFIXES = (".md", ".rst", ".txt")


def path_role(path: str) -> Role:
    """The role a file plays, judged from its relative path alone.

    Vendored code is ``lib`` even when it holds tests (it is not the project's code); then
    test code by its path (``cq.parse.syntax.is_test_path``); then docs and examples.
    """
    parts = normalise(path).lower().split("/")
    dirs, name = parts[:-1], parts[-1]
    if any(d in _LIB_DIRS for d in dirs):
        return "lib"
    if is_test_path(path):
        return "test"
    if any(d in _DOC_DIRS for d in dirs) or name.endswith(_DOC_SUFFIXES):
        return "doc"
    return "src"
