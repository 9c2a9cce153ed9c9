"""A first question on a tree cq has not indexed: it answers at once without the index when the
build is too large to wait for (``[index] background_build_bytes``), says so in the report
itself (markdown and JSON, not only on stderr), leaves the build
to a process of its own that the next questions find done, and stays within ``--timeout``.
Real ``cq`` subprocesses, real rg and tantivy; a profile lowers the threshold so a small tree
takes the path (the third test generates a tree over the default threshold). Timing targets
are bench/cold_questions.py's; the bounds here are generous."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from conftest import UPLOAD_MODULE as MODULE
from conftest import UPLOAD_QUESTION as QUESTION
from conftest import run_cq, run_hooked, write_tree

from cq.index import indexed_files
from cq.rewrite.vocabulary import load_vocabulary

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

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


# A search waits for a build below the threshold until its --timeout (default 10 s), which
# a loaded machine (nice, CPU burners beside) can use up; beside burners the first question
# of a tree above the threshold even said "not ready within --timeout" instead of "is being
# built" (likely the deadline came before the index thread had weighed the tree). These are
# tests of which answer a search gives, not of how fast it decides.
PATIENT = ("--timeout", "600")


def _later(repo: Path, cache: Path, *extra: str):  # type: ignore[no-untyped-def]
    """The first answer with the index among the next questions, once the build behind the
    first one is done (a hang bound, generous on a loaded machine)."""
    give_up = time.monotonic() + 300
    while True:
        run, data = _ask(repo, cache, *extra, *PATIENT)
        if "files" in data["summary"]["telemetry"].get("index", {}) or time.monotonic() > give_up:
            return run, data
        time.sleep(1)


def test_first_question_answers_without_the_index_and_says_so(tmp_path: Path) -> None:
    repo = _tree(tmp_path / "repo", 40)
    profile = ("--profile", str(repo / "background.toml"))
    first, data = _ask(repo, tmp_path / "cache", *profile, *PATIENT)
    assert BUILDING in first.stderr and "answered without it" in first.stderr
    assert data["summary"]["telemetry"]["index"]["building_source_bytes"] > 0
    assert BUILDING in data["summary"]["telemetry"]["index"]["unused"]
    assert "files" not in data["summary"]["telemetry"]["index"]  # no index fused
    assert data["findings"], "rg and the rewrite alone still answer"
    assert not data["sections"] or all(s["type"] != "functions" for s in data["sections"])
    # LibCST's facts are left to later questions: no shown hit has its resolution.
    assert all(not (f.get("enrichment") or {}).get("resolution") for f in data["findings"])
    # The build went on behind it: a later question is answered with the index, and says
    # nothing of a build.
    later, data = _later(repo, tmp_path / "cache", *profile)
    assert BUILDING not in later.stderr
    assert data["summary"]["telemetry"]["index"]["files"] == 40


def test_the_markdown_report_says_it_answered_without_the_index(tmp_path: Path) -> None:
    repo = _tree(tmp_path / "repo", 40)
    run = run_cq(
        "search",
        "-",
        "--root",
        str(repo),
        "--profile",
        str(repo / "background.toml"),
        *PATIENT,
        stdin=QUESTION,
        env={"CQ_CACHE_DIR": str(tmp_path / "cache")},
        timeout=120,
    )
    assert run.returncode in (0, 1), run.stderr
    said = [line for line in run.stdout.splitlines() if line.startswith("Index: ")]
    assert len(said) == 1 and BUILDING in said[0] and "answered without it" in said[0]


def test_a_build_below_the_threshold_is_waited_for(tmp_path: Path) -> None:
    repo = _tree(tmp_path / "repo", 40)
    run, data = _ask(repo, tmp_path / "cache", *PATIENT)
    assert BUILDING not in run.stderr
    assert data["summary"]["telemetry"]["index"]["files"] == 40


def test_a_first_question_on_a_large_tree_waits_for_its_index_within_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tree over the old threshold (10 MB of new source; 12 MB here) waits for its first
    build, never left behind, and no longer than the question's wait for its index
    (``[index] question_wait_s``, here 6 s in a profile: longer than this --timeout). The
    build never ends (``stuck-index``): the search ends all the same, says the index was not
    ready in time and answers without it (a condition, not a clock: a search that waited for
    the build would never end, and the hang bound fails it); the build goes on behind it."""
    filler = "\n".join(f"# padding line {n} of the upload module" for n in range(120)) + "\n"
    files = {f"pkg/upload_{i}.py": MODULE.format(i=i) + filler for i in range(2400)}
    repo = write_tree(tmp_path / "repo", {**files, "wait.toml": "[index]\nquestion_wait_s = 6\n"})
    cache = tmp_path / "cache"
    args = ("search", "--root", str(repo), "--format", "json", "--timeout", "3")
    args += ("--profile", str(repo / "wait.toml"), "--", QUESTION)
    run = run_hooked("stuck-index", *args, env={"CQ_CACHE_DIR": str(cache)})
    assert run.returncode in (0, 1), run.stderr
    assert BUILDING not in run.stderr
    data = run.json()
    assert "not ready within --timeout" in data["summary"]["telemetry"]["index"]["unused"]
    # rg's evidence, or what it read before --timeout stopped it, said so (beside burners a
    # --timeout of 1 s once gave no findings)
    assert data["findings"] or data["summary"]["stats"]["timed_out"]
    # A build the deadline cut goes on behind the search: the next question finds the index
    # whole, with no other question building a share of it meanwhile.
    monkeypatch.setenv("CQ_CACHE_DIR", str(cache))
    give_up = time.monotonic() + 300  # a hang bound: generous on a loaded machine
    while len((indexed_files(repo.resolve()) or ({}, 0))[0]) < 2400:
        assert time.monotonic() < give_up, "the rest of the build never went on"
        time.sleep(0.5)


def test_vocabulary_scan_stops_at_its_timeout_and_caches_nothing(tmp_path: Path) -> None:
    repo = _tree(tmp_path / "repo", 40)
    assert load_vocabulary(repo, timeout=1e-6).names == {}
    assert load_vocabulary(repo).defines("UploadHandler7")  # scanned again, not cached empty


def test_a_long_lived_process_keeps_the_vocabularies_of_its_last_three_roots(
    tmp_path: Path,
) -> None:
    """The server's search process switching between a few roots (an agent's repository and
    two it looks into) reads and decodes none of their vocabularies again, nor builds their
    lookups by word again; an edited root's new vocabulary takes its own place, and a fourth
    root makes room by dropping the one used longest ago."""
    from cq.rewrite.vocabulary import name_words

    roots = [_tree(tmp_path / f"repo{n}", 3) for n in range(4)]
    first = [load_vocabulary(root) for root in roots[:3]]
    words = [name_words(vocabulary) for vocabulary in first]
    again = [load_vocabulary(root) for root in roots[:3]]
    assert all(a is b for a, b in zip(first, again, strict=True))
    assert all(name_words(v) is w for v, w in zip(again, words, strict=True))
    (roots[2] / "pkg" / "edited.py").write_text("class EditedHandler:\n    pass\n")
    assert load_vocabulary(roots[2]).defines("EditedHandler")
    assert all(load_vocabulary(r) is v for r, v in zip(roots[:2], first, strict=False))
    load_vocabulary(roots[2])
    load_vocabulary(roots[3])  # roots[0] was used longest ago
    assert load_vocabulary(roots[1]) is first[1] and load_vocabulary(roots[0]) is not first[0]
