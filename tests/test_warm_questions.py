"""Warm questions through the per-user server: what its search processes keep between
questions (the tree's vocabulary, the heavy parsers' imports) never outlives an edit.
Run for real: ``cq server start``, questions through it, files edited in between."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import run_cq
from rewrite_fixture import graph_repo
from test_server import _env, _served, _start, runtime  # noqa: F401 (runtime: a fixture)

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the server is Linux only")

QUESTION = "how are two graphs merged into one?"


def _identifiers(root: Path, runtime_dir: Path, cache: Path) -> list[str]:
    run = run_cq(
        "search",
        QUESTION,
        "--root",
        str(root),
        "--format",
        "json",
        env=_env(runtime_dir, CQ_CACHE_DIR=str(cache), CQ_LLM="off"),
    )
    assert run.returncode in (0, 1), run.stderr
    return list((run.json()["summary"]["rewrite"] or {}).get("identifiers", []))


def test_a_warm_question_sees_a_definition_added_to_a_file_it_read(
    tmp_path: Path,
    runtime: Path,  # noqa: F811
) -> None:
    root = graph_repo(tmp_path)
    cache = tmp_path / "cache"
    _start(runtime, CQ_CACHE_DIR=str(cache))
    before = _identifiers(root, runtime, cache)
    assert "merge_graphs" not in before
    assert _identifiers(root, runtime, cache) == before  # the same question, warm: the same
    store = root / "graphstore" / "store.py"
    store.write_text(
        store.read_text() + "\n    def merge_graphs(self, other):\n        return self\n"
    )
    assert "merge_graphs" in _identifiers(root, runtime, cache)
    assert _served(runtime, CQ_CACHE_DIR=str(cache)) == 3  # all three in the server's process
