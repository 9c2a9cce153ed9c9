"""Killing ``cq`` during a pool run leaves no process behind and closes its pipes.

A real ``cq search`` on a generated tree, the pool forced with ``CQ_POOL_MIN_BYTES``, is
signalled once its workers are up; every child it had (workers, the resource tracker) must
be gone and its stdout and stderr must reach end-of-file within seconds. The workers take
minutes over each batch (``tests/hooked_cq.py``: ``stalled-workers``), so the search is
surely mid-run when the signal comes, however loaded the machine (at load 25-40 a search
could finish before its second worker had started). Linux only: the children are read from
/proc.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import write_tree

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")

# Seconds a loaded machine may take to reap and close: a hang bound, kept well under the
# stalled workers' STALL_SECONDS (a worker left alive would end only then)
_GRACE = 120.0
HOOKED = Path(__file__).parent / "hooked_cq.py"


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            found |= {int(x) for x in Path(f"/proc/{pid}/task/{task}/children").read_text().split()}
        except OSError:
            continue
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _is_worker(pid: int, parent: int) -> bool:
    """A pool worker: spawned (a fresh interpreter), or forked from cq (the one-shot CLI,
    with no thread to hold a lock, forks them: its own command line)."""
    command = _cmdline(pid)
    return "spawn_main" in command or command == _cmdline(parent)


def _working(pid: int) -> bool:
    """The worker has started up: its set-up pointed its stderr at /dev/null."""
    try:
        return os.readlink(f"/proc/{pid}/fd/2") == os.devnull
    except OSError:
        return False


def _identity(pid: int) -> tuple[int, str] | None:
    """``(pid, start time)``: a pid alone may be reused by another process once freed."""
    try:
        return pid, Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _running(identity: tuple[int, str]) -> bool:
    """Still the same process, alive and not a zombie (a dead child of init may wait a while
    to be reaped)."""
    pid, started = identity
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[19] == started and fields[0] != "Z"


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """~6 MB of Python with a hit in every function: seconds of parsing for two workers."""
    body = "".join(
        f"def handler_{i}(value):\n    result = handler_{i - 1}(value) + {i}\n    return result\n\n"
        for i in range(1, 1200)
    )
    # Each file its own content: cq parses identical files once.
    files = {f"pkg{n // 50}/mod_{n}.py": f"# module {n}\n{body}" for n in range(120)}
    return write_tree(tmp_path_factory.mktemp("big"), files)


@pytest.mark.parametrize(
    ("sig", "status"),
    [
        (signal.SIGTERM, 128 + signal.SIGTERM),
        (signal.SIGKILL, -signal.SIGKILL),
        (signal.SIGINT, 130),
    ],
    ids=["SIGTERM", "SIGKILL", "SIGINT"],
)
def test_killing_cq_during_a_pool_run_leaves_nothing(
    big_tree: Path, tmp_path: Path, sig: int, status: int
) -> None:
    # CQ_STANDBY: the enrichment's standby, a fork of cq too, would be taken for a worker
    env = {**os.environ, "CQ_POOL_MIN_BYTES": "1", "CQ_MAX_WORKERS": "2", "CQ_STANDBY": "off"}
    argv = [sys.executable, str(HOOKED), "stalled-workers", "search", "result"]
    argv += ["--root", str(big_tree), "--no-cache"]
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as at a shell
    )
    seen: set[tuple[int, str]] = set()
    try:
        deadline = time.monotonic() + 120
        workers: list[tuple[int, str]] = []
        while len(workers) < 2 and proc.poll() is None and time.monotonic() < deadline:
            seen |= {i for i in map(_identity, _children(proc.pid)) if i is not None}
            workers = [i for i in seen if _is_worker(i[0], proc.pid) and _working(i[0])]
            time.sleep(0.02)
        assert len(workers) == 2, f"the pool never started: {proc.poll()}"
        if any("spawn_main" in _cmdline(pid) for pid, _ in workers):  # forked: no semaphores
            assert any("resource_tracker" in _cmdline(pid) for pid, _ in seen)
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=_GRACE)  # both pipes reached end-of-file
        assert proc.returncode == status, err.decode(errors="replace")
        assert b"Traceback" not in err
        assert not _survivors(seen)
    finally:  # never leave strays behind a failed test
        _reap(proc, seen)


_SERVER_LIKE = """
import sys, threading, time
from cq.model import SearchRequest
from cq.pipeline import run_search

request = SearchRequest(query="result", root=sys.argv[1], use_cache=False)
searcher = threading.Thread(target=run_search, args=(request,))
searcher.start()
searcher.join()
print("searched", flush=True)
time.sleep(600)
"""


def test_workers_of_a_pool_started_off_the_main_thread_die_with_it(big_tree: Path) -> None:
    """The MCP server searches on a worker thread and keeps its pool between calls. A process
    with threads cannot fork its workers safely: a fork server does, one interpreter with the
    parsers imported, so they start with nothing to import (spawned ones imported the parsers
    each); killed outright, the process takes the fork server and the workers with it."""
    env = {**os.environ, "CQ_POOL_MIN_BYTES": "1", "CQ_MAX_WORKERS": "2"}
    argv = [sys.executable, "-c", _SERVER_LIKE, str(big_tree)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    seen: set[tuple[int, str]] = set()
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"searched\n"
        servers = [c for c in _children(proc.pid) if "multiprocessing.forkserver" in _cmdline(c)]
        assert len(servers) == 1
        workers = _children(servers[0])
        assert len(workers) == 2  # kept, idle
        seen = {i for i in map(_identity, {*servers, *workers}) if i is not None}
        proc.kill()
        _out, err = proc.communicate(timeout=_GRACE)
        assert b"Traceback" not in err
        assert not _survivors(seen)
    finally:
        _reap(proc, seen)


def _survivors(seen: set[tuple[int, str]]) -> list[str]:
    """Command lines of the processes in ``seen`` still running after a grace period."""
    end = time.monotonic() + _GRACE
    while any(map(_running, seen)) and time.monotonic() < end:
        time.sleep(0.05)
    return [_cmdline(pid) for pid, started in seen if _running((pid, started))]


def _reap(proc: subprocess.Popen[bytes], seen: set[tuple[int, str]]) -> None:
    """Never leave strays behind a failed test."""
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for pid, started in seen:
        if _running((pid, started)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
