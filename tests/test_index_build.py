"""The index's pooled build: above ``[index] build_pool_bytes`` of new source, worker
processes prepare the documents' rows. A profile lowers the threshold so a small tree takes
that path for real (real ``cq index`` subprocesses, spawned workers, tantivy); the pooled
index answers exactly as one built in-process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import UPLOAD_MODULE as MODULE
from conftest import UPLOAD_QUESTION as QUESTION
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)


def _index(repo: Path, cache: Path, *extra: str) -> dict[str, str]:
    run = run_cq("index", "--root", str(repo), *extra, env={"CQ_CACHE_DIR": str(cache)})
    assert run.returncode == 0, run.stderr
    return dict(line.split(": ", 1) for line in run.stdout.splitlines() if ": " in line)


def _answer(repo: Path, cache: Path) -> tuple[list, list]:
    run = run_cq(
        "search",
        "-",
        "--root",
        str(repo),
        "--format",
        "json",
        stdin=QUESTION,
        env={"CQ_CACHE_DIR": str(cache)},
    )
    assert run.returncode in (0, 1), run.stderr
    data = run.json()
    assert data["run"]["counters"].get("index.files_updated", 0) == 0  # built by cq index
    functions = next(s for s in data["sections"] if s["type"] == "functions")
    return data["findings"], functions["functions"]


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="a pool needs two CPUs (rows.py)")
def test_a_pooled_build_answers_as_an_in_process_build(tmp_path: Path) -> None:
    repo = write_tree(
        tmp_path / "repo", {f"app/uploads/m{i:02d}.py": MODULE.format(i=i) for i in range(24)}
    )
    profile = write_tree(repo, {"pool.toml": "[index]\nbuild_pool_bytes = 1\n"}) / "pool.toml"
    pooled = _index(repo, tmp_path / "pooled", "--profile", str(profile))
    assert pooled["prepared by worker processes"] == "24 files"
    plain = _index(repo, tmp_path / "plain")
    assert "prepared by worker processes" not in plain  # 6 KB: far below the 32 MB default
    assert pooled["documents"] == plain["documents"] and pooled["files"] == plain["files"]
    answer = _answer(repo, tmp_path / "pooled")
    assert answer[1] and answer == _answer(repo, tmp_path / "plain")


def test_the_read_line_speaks_of_others_only_when_some_were_known_by_their_stat(
    tmp_path: Path,
) -> None:
    """A first build read every file and said "read: 2 files (the others known by their
    stat)": there were no others."""
    repo = write_tree(tmp_path / "repo", {"a.py": "def a():\n    pass\n", "b.py": "x = 1\n"})
    assert _index(repo, tmp_path / "cache")["read"] == "2 files"
