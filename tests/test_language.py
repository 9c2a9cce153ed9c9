"""The one extension -> language rule (``cq.model.language``): the search's scope, the index
and the rg file types all read a file's language the same way."""

from __future__ import annotations

from pathlib import Path

import pytest

from cq.model.language import (
    EXTENSIONS,
    is_python_module,
    is_rust,
    is_stub,
    language_of,
)
from cq.tools import rg_types
from tests.conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("pkg/a.py", "python"),
        ("typings/a.pyi", "python"),
        ("src/lib.rs", "rust"),
        ("LEGACY/MOD.PY", "python"),
        ("README.md", None),
        ("a.py.orig", None),
        ("rs", None),
    ],
)
def test_language_of_reads_the_extension(path: str, language: str | None) -> None:
    assert language_of(path) == language


def test_a_scope_keeps_only_its_language() -> None:
    assert language_of("src/lib.rs", "python") is None
    assert language_of("pkg/a.pyi", "rust") is None
    assert language_of("pkg/a.pyi", "python") == "python"


def test_a_stub_is_python_but_not_a_module() -> None:
    assert is_stub("a.pyi") and not is_stub("a.py")
    assert is_python_module("a.py") and not is_python_module("a.pyi")
    assert not is_python_module("lib.rs") and is_rust("lib.rs") and not is_rust("a.py")


def test_rg_file_types_list_the_same_extensions() -> None:
    """rg lists the files the search reads: its types must name exactly the rule's
    extensions (``cq.tools`` may import no model, so it spells them itself)."""
    flags = rg_types("python", "rust")
    defined = dict(flags[i + 1].split(":", 1) for i, f in enumerate(flags) if f == "--type-add")
    globbed = {
        "python": {f".{e}" for e in defined["cqpython"].strip("*.{}").split(",")},
        "rust": {defined["cqrust"].removeprefix("*")},
    }
    assert globbed == {lang: set(exts) for lang, exts in EXTENSIONS.items()}


def test_search_reports_each_file_in_its_language(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "repo",
        {
            "app/shape.py": "def area_of_shape(r):\n    return r\n",
            "app/shape.pyi": "def area_of_shape(r: float) -> float: ...\n",
            "src/shape.rs": "pub fn area_of_shape(r: f64) -> f64 { r }\n",
            "notes.txt": "area_of_shape\n",
        },
    )
    run = run_cq("search", "area_of_shape", "--format", "json", "--no-index", cwd=root)
    assert run.returncode == 0, run.stderr
    seen = {f["file"]: f["language"] for f in run.json()["findings"]}
    assert seen == {"app/shape.py": "python", "app/shape.pyi": "python", "src/shape.rs": "rust"}
    rust_only = run_cq("search", "area_of_shape", "--lang", "rust", "--format", "json", cwd=root)
    assert {f["file"] for f in rust_only.json()["findings"]} == {"src/shape.rs"}
