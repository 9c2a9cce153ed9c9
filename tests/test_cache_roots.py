"""Repository indexes count against the cache bound: least recently used roots go first, the
index of a tree that is gone is removed, and ``cq cache info`` lists the roots.

Real searches with questions (each builds its root's tantivy index in the cache dir) at
``CQ_CACHE_MAX_MB=1``: half for the database, half for indexes, and each tree's index is
about a quarter of a megabyte, so the fourth root needs room made.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_cq, word_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

MB = 1 << 20
BOUND = {"CQ_CACHE_MAX_MB": "1"}


def _ask(root: Path):
    run = run_cq("search", "where is the record validated", "--root", str(root), env=BOUND)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    return run


def _dir_bytes(directory: Path) -> int:
    return sum(
        os.lstat(os.path.join(folder, name)).st_size
        for folder, _dirs, names in os.walk(directory)
        for name in names
    )


def _listed(info: str) -> list[str]:
    """The roots ``cq cache info`` lists, in its order (most recently used first)."""
    return [line.strip().split(": ")[0] for line in info.splitlines() if "last used" in line]


def test_indexes_keep_to_the_bound_least_recently_used_first(
    tmp_path: Path, _isolated_cache: Path
) -> None:
    trees = [word_tree(tmp_path, n) for n in range(5)]
    for tree in trees[:4]:
        _ask(tree)
        assert _dir_bytes(_isolated_cache) <= 1.1 * MB
    info = run_cq("cache", "info", env=BOUND)
    assert info.returncode == 0, info.stderr
    listed = _listed(info.stdout)
    assert listed[0] == str(trees[3]) and str(trees[0]) not in listed
    kept = [t for t in trees[:3] if str(t) in listed]
    assert kept, info.stdout  # at least one older root fits beside the newest

    _ask(kept[0])  # used again: now the newest of the older ones
    _ask(trees[4])
    assert _dir_bytes(_isolated_cache) <= 1.1 * MB
    listed = _listed(run_cq("cache", "info", env=BOUND).stdout)
    assert listed[:2] == [str(trees[4]), str(kept[0])]
    assert str(trees[3]) not in listed  # least recently used of the rest: evicted first


def test_the_index_of_a_tree_that_is_gone_is_removed(tmp_path: Path, _isolated_cache) -> None:
    first, second = word_tree(tmp_path, 10), word_tree(tmp_path, 11)
    _ask(first)
    _ask(second)
    assert _listed(run_cq("cache", "info").stdout) == [str(second), str(first)]
    shutil.rmtree(second)
    info = run_cq("cache", "info").stdout
    assert f"{second} (gone)" in info
    pruned = run_cq("cache", "prune")
    assert pruned.returncode == 0 and "1 repository indexes removed" in pruned.stdout
    assert _listed(run_cq("cache", "info").stdout) == [str(first)]
    assert len(list((_isolated_cache / "index").glob("v*/*"))) == 1


@pytest.mark.cli_subprocess
def test_a_build_under_way_names_its_root(tmp_path: Path, _isolated_cache: Path) -> None:
    """``cq cache info`` while a first build runs (or after one killed midway, as a one-shot
    search's can be) names the tree it is for, not an unnamed root."""
    tree = word_tree(tmp_path, 0)
    script = Path(__file__).parent / "hooked_cq.py"
    build = subprocess.Popen(  # each file prepared a minute late: under way until killed
        [sys.executable, str(script), "slow-index=60", "index", "--root", str(tree)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **BOUND},
    )
    try:
        deadline = time.monotonic() + 300  # a condition, not a clock: generous when busy
        listed: list[str] = []
        while not listed and time.monotonic() < deadline:  # until its index dir is made
            time.sleep(0.2)
            listed = _listed(run_cq("cache", "info", env=BOUND).stdout)
        assert build.poll() is None  # still building
        assert listed == [str(tree)]
    finally:
        build.kill()
        build.wait()
    assert _listed(run_cq("cache", "info", env=BOUND).stdout) == [str(tree)]
