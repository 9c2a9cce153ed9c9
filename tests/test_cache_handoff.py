"""A one-shot search's cache writes are stored by a child after cq has gone
(``cq/cache/handoff.py``): cq answers without waiting for them, and whatever runs next sees
them. Real ``python -m cq`` subprocesses (the hand-off is the CLI's process exit), real
sqlite, and a transaction held by the test to keep the writer waiting as long as it likes.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import cache_settled, run_cq, write_tree

from cq.cache import store as store_module
from cq.cache.sharing import WRITER_LOCK_NAME
from cq.cache.store import FILE_NAME, Store

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a forked writer: Linux only")


def _tree(root: Path) -> Path:
    files = {f"pkg/m{n}.py": f"def target_{n}():\n    return target({n})\n" for n in range(6)}
    files["pkg/core.py"] = "def target(x):\n    return x\n"
    return write_tree(root, files)


def _search(root: Path, cache: Path) -> dict:
    run = run_cq(
        "search",
        "target",
        "--root",
        str(root),
        "--format",
        "json",
        env={"CQ_CACHE_DIR": str(cache)},
    )
    assert run.returncode == 0, run.stderr
    return run.json()


def _writer_busy(cache: Path) -> bool:
    """Whether a writer holds the cache dir's writer lock now."""
    fd = os.open(cache / WRITER_LOCK_NAME, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _held_write_lock(cache: Path) -> sqlite3.Connection:
    """A connection holding the database's write lock (the writer's inserts wait on it)."""
    con = sqlite3.connect(cache / FILE_NAME, isolation_level=None, timeout=30)
    con.execute("BEGIN IMMEDIATE")
    return con


def test_cq_answers_while_its_writes_wait_and_the_next_search_finds_them(tmp_path: Path) -> None:
    root, cache = _tree(tmp_path / "tree"), tmp_path / "cache"
    other = write_tree(tmp_path / "other", {"a.py": "target = 1\n"})
    _search(other, cache)  # the database exists (a first connection writes its schema)
    cache_settled(cache)  # that search's writer is done: the lock below holds the next one's
    held = _held_write_lock(cache)
    try:
        first = _search(root, cache)  # answered: its writes are the writer's now
        assert first["run"]["counters"]["cache_misses"] == 7
        assert _writer_busy(cache)  # waiting on the test's lock, after cq has ended
    finally:
        held.execute("ROLLBACK")
        held.close()
    second = _search(root, cache)  # waits for the writer, then reads what it stored
    assert second["run"]["counters"]["verdict_cache_hits"] == 7
    assert second["findings"] == first["findings"]
    assert not _writer_busy(cache)
    # the writer closed the last connection: the log was folded back and removed
    assert not (cache / f"{FILE_NAME}-wal").exists()


def test_cache_clear_right_after_a_search_leaves_it_empty(tmp_path: Path) -> None:
    """``cq cache clear`` waits for the writer: it never empties the store before the
    writes of the search before it land."""
    root, cache = _tree(tmp_path / "tree"), tmp_path / "cache"
    _search(write_tree(tmp_path / "other", {"a.py": "target = 1\n"}), cache)
    cache_settled(cache)  # that search's writer is done: the lock below holds the next one's
    held = _held_write_lock(cache)
    env = {**os.environ, "CQ_CACHE_DIR": str(cache)}
    try:
        _search(root, cache)
        clearing = subprocess.Popen(
            [sys.executable, "-m", "cq", "cache", "clear"], env=env, stderr=subprocess.PIPE
        )
        time.sleep(0.3)  # it is waiting for the writer, which waits for the test's lock
        assert clearing.poll() is None
    finally:
        held.execute("ROLLBACK")
        held.close()
    assert clearing.wait(timeout=120) == 0, clearing.stderr.read()  # type: ignore[union-attr]
    info = run_cq("cache", "info", env={"CQ_CACHE_DIR": str(cache)})
    assert "entries: 0," in info.stdout, info.stdout


def test_a_store_keeping_its_writes_reads_them_and_stores_them_at_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    handed: list[list[Store]] = []
    monkeypatch.setattr(store_module, "_closing", handed.append)
    path = tmp_path / FILE_NAME
    keeping = Store(path)
    keeping.put_many("ns", {"a": b"1", "b": b"2"})
    other = Store(path)  # another process's view: nothing stored yet
    assert other.get_many("ns", ["a", "b"]) == {}
    assert keeping.get_many("ns", ["a", "b", "c"]) == {"a": b"1", "b": b"2"}
    keeping.delete("ns", "b")
    assert keeping.get_many("ns", ["b"]) == {}
    keeping.close()  # a store closed before the end stores what it kept
    assert other.get_many("ns", ["a", "b"]) == {"a": b"1"}
    other.close()


def test_writes_past_what_a_process_keeps_are_stored_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "_closing", lambda stores: None)
    monkeypatch.setattr(store_module, "_DEFER_MAX_BYTES", 10)
    path = tmp_path / FILE_NAME
    keeping, other = Store(path), Store(path)
    keeping.put_many("ns", {"small": b"12345"})
    assert other.get_many("ns", ["small"]) == {}
    keeping.put_many("ns", {"large": b"x" * 20})  # over the bound: both stored, in order
    assert other.get_many("ns", ["small", "large"]) == {"small": b"12345", "large": b"x" * 20}
    keeping.close()
    other.close()
