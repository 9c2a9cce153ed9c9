"""A first question on a tree cq has not indexed: it answers at once without the index when the
build is too large to wait for (``[index] background_build_bytes``), says so, keeps what it
built for the next questions, and stays within ``--timeout``. Real ``cq`` subprocesses, real
rg and tantivy; a profile lowers the threshold so a small tree takes the path (the last test
generates a tree over the default threshold). Timing targets are bench/cold_questions.py's;
the bounds here are generous."""

from __future__ import annotations

import time
from pathlib import Path

from conftest import run_cq, write_tree

from cq.rewrite.vocabulary import load_vocabulary

MODULE = '''"""Uploads of module {i}."""


class UploadHandler{i}:
    """Receive the chunks of an upload and store them."""

    def receive_chunk(self, chunk):
        return chunk

    def file_complete(self, size):
        return size
'''
QUESTION = "where are the chunks of an upload received?"
BUILDING = "is being built"


def _tree(root: Path, modules: int, filler: str = "") -> Path:
    files = {f"pkg/upload_{i}.py": MODULE.format(i=i) + filler for i in range(modules)}
    return write_tree(root, {**files, "background.toml": "[index]\nbackground_build_bytes = 1\n"})


def _ask(repo: Path, cache: Path, *extra: str, timeout: float = 120):  # type: ignore[no-untyped-def]
    run = run_cq(
        "search",
        "-",
        "--root",
        str(repo),
        "--format",
        "json",
        *extra,
        stdin=QUESTION,
        env={"CQ_CACHE_DIR": str(cache)},
        timeout=timeout,
    )
    assert run.returncode in (0, 1), run.stderr
    return run, run.json()


def _indexed(repo: Path, cache: Path) -> int:
    """Files ``cq index`` still had to index (what earlier searches left)."""
    run = run_cq("index", "--root", str(repo), env={"CQ_CACHE_DIR": str(cache)})
    assert run.returncode == 0, run.stderr
    line = next(x for x in run.stdout.splitlines() if x.startswith("updated: "))
    return int(line.split()[1])


def test_first_question_answers_without_the_index_and_says_so(tmp_path: Path) -> None:
    repo = _tree(tmp_path / "repo", 40)
    profile = ("--profile", str(repo / "background.toml"))
    first, data = _ask(repo, tmp_path / "cache", *profile)
    assert BUILDING in first.stderr and "answered without it" in first.stderr
    assert data["summary"]["telemetry"]["index"]["building_source_bytes"] > 0
    assert "files" not in data["summary"]["telemetry"]["index"]  # no index fused
    assert data["findings"], "rg and the rewrite alone still answer"
    assert not data["sections"] or all(s["type"] != "functions" for s in data["sections"])
    # LibCST's facts are left to later questions: no shown hit has its resolution.
    assert all(not (f.get("enrichment") or {}).get("resolution") for f in data["findings"])
    # The one-shot cq kept what its build had indexed when it exited.
    assert _indexed(repo, tmp_path / "cache") < 40
    # Once built, the same question is answered with the index, and says nothing of a build.
    later, data = _ask(repo, tmp_path / "cache", *profile)
    assert BUILDING not in later.stderr
    assert data["summary"]["telemetry"]["index"]["files"] == 40


def test_a_build_below_the_threshold_is_waited_for(tmp_path: Path) -> None:
    repo = _tree(tmp_path / "repo", 40)
    run, data = _ask(repo, tmp_path / "cache")
    assert BUILDING not in run.stderr
    assert data["summary"]["telemetry"]["index"]["files"] == 40


def test_timeout_bounds_a_first_question_on_a_large_tree(tmp_path: Path) -> None:
    """Over the default threshold (10 MB of new source): the whole run, the build's commit
    at exit included, ends within --timeout and a generous margin for a loaded machine."""
    filler = "\n".join(f"# padding line {n} of the upload module" for n in range(120)) + "\n"
    repo = _tree(tmp_path / "repo", 2400, filler)
    started = time.monotonic()
    run, data = _ask(repo, tmp_path / "cache", "--timeout", "2", timeout=300)
    elapsed = time.monotonic() - started
    assert BUILDING in run.stderr
    assert data["findings"]
    assert elapsed < 2 + 60, elapsed


def test_vocabulary_scan_stops_at_its_timeout_and_caches_nothing(tmp_path: Path) -> None:
    repo = _tree(tmp_path / "repo", 40)
    assert load_vocabulary(repo, timeout=1e-6).names == {}
    assert load_vocabulary(repo).defines("UploadHandler7")  # scanned again, not cached empty
