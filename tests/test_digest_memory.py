"""The digest memory (``cq.cache.digests``): a warm search takes the digest of a file whose
stat has not moved from the memory instead of reading it, and never serves an old digest for a
file whose content changed, even when the edit keeps the file's size and mtime."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from conftest import run_cq, write_tree

from cq.cache.digests import RACY_NS

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

# Same length, ``target`` at the same bytes: a definition in one, a call in the other.
DEFINES = "def target():\n    return 1\n"
CALLS = "x = target()\nprint(x)     \n"
assert len(DEFINES) == len(CALLS)
FILES = {"pkg/mod.py": DEFINES, "pkg/use.py": "from pkg.mod import target\ntarget()\n"}


def _search(root: Path, *extra: str):
    run = run_cq("search", "target", "--root", str(root), "--format", "json", *extra)
    assert run.returncode == 0, run.stderr
    return run.json()


def _hits(result) -> list[tuple[str, int, int, str]]:
    return sorted((f["file"], f["line"], f["col"], f["category"]) for f in result["findings"])


def _mod_line_1(result) -> str:
    """The category of the hit on ``pkg/mod.py``'s first line."""
    return next(c for f, line, _, c in _hits(result) if f == "pkg/mod.py" and line == 1)


def _counters(result) -> dict[str, int]:
    return result["run"]["counters"]


def _settle() -> None:
    """Wait until the files written so far are older than the racy window."""
    time.sleep(RACY_NS / 1e9 + 0.2)


def test_an_unchanged_file_is_not_read_and_an_edit_keeping_size_and_mtime_is_found(
    tmp_path: Path,
) -> None:
    repo = write_tree(tmp_path / "repo", FILES)
    _settle()
    first = _search(repo)
    assert _counters(first)["files_read"] == 2 and "files_recalled" not in _counters(first)
    warm = _search(repo)
    # Classification took both digests from the memory and its records from the cache
    # (the shown hits' files are still read, for their enrichment).
    assert _counters(warm)["files_recalled"] == 2 and _counters(warm)["cache_hits"] == 2
    assert _hits(warm) == _hits(first)
    assert _mod_line_1(first) == "definition"

    mod = repo / "pkg" / "mod.py"
    before = os.stat(mod)
    mod.write_text(CALLS)  # same size; the mtime is then set back as a careful tool would
    os.utime(mod, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(mod)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)

    edited = _search(repo)
    assert _counters(edited)["files_recalled"] == 1  # use.py; mod.py's ctime moved
    assert _hits(edited) == _hits(_search(repo, "--no-cache"))
    assert _mod_line_1(edited) == "callsite"


def test_a_touched_file_is_hashed_again_and_reuses_its_payload(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", FILES)
    _settle()
    first = _search(repo)
    parsed = _counters(first).get("files_parsed", 0) + _counters(first).get("slices_parsed", 0)
    assert parsed >= 1  # whole files or slices of them
    os.utime(repo / "pkg" / "mod.py")  # touch: new mtime and ctime, same bytes

    touched = _search(repo)
    counters = _counters(touched)
    assert counters["files_recalled"] == 1  # use.py; mod.py was read and hashed again
    assert counters.get("files_parsed", 0) == 0 and counters.get("slices_parsed", 0) == 0
    assert counters["cache_hits"] == 2
    assert _hits(touched) == _hits(first)


def test_a_file_whose_times_are_not_safely_past_is_read_by_every_search(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", FILES)
    _settle()
    mod = repo / "pkg" / "mod.py"
    future = time.time_ns() + 3600 * 10**9  # a clock ahead of this one: always racy
    os.utime(mod, ns=(future, future))
    first = _search(repo)
    assert _counters(first)["files_racy"] == 1  # mod.py; use.py is remembered
    mod.write_text(CALLS)  # same size, the same (future) mtime set again
    os.utime(mod, ns=(future, future))
    second = _search(repo)
    assert _counters(second)["files_recalled"] == 1 and _counters(second)["files_racy"] == 1
    assert _mod_line_1(second) == "callsite"
    assert _hits(second) == _hits(_search(repo, "--no-cache"))


def test_no_cache_neither_recalls_nor_remembers(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", FILES)
    _settle()
    _search(repo, "--no-cache")
    assert "files_recalled" not in _counters(_search(repo))  # nothing was remembered
    assert _counters(_search(repo))["files_recalled"] == 2  # the cached search was
