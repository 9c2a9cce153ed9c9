"""The server gives memory back: ``cq server status`` shows what its processes take, and a
search process that served many roots is replaced by a fresh one between two searches, with
no search lost or slowed into a fallback. Linux only (the server)."""

from __future__ import annotations

import contextlib
import re
import sys
import time
from pathlib import Path

import pytest
from conftest import run_cq, write_tree
from test_server import _env, _start, runtime  # noqa: F401 (runtime: a fixture)
from test_server_wedge import _status

from cq.server.memory import WORKER_MAX_ROOTS, descendants

# run_cq: the client's CLI forked (forked_cli.py), the server the real daemon it starts
pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="the server is Linux only"),
    pytest.mark.cli_forked,
]


def _workers(daemon: int) -> list[int]:
    """The daemon's live search processes."""
    found = []
    for pid in descendants(daemon):
        with contextlib.suppress(OSError):
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state != "Z" and b"cq.server.worker" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
    return found


def test_status_shows_the_memory_of_the_daemon_search_processes_and_pyrefly(
    tmp_path: Path,
    runtime: Path,  # noqa: F811
) -> None:
    repo = write_tree(tmp_path / "repo", {"app.py": "def register(name):\n    return name\n"})
    _start(runtime)
    assert run_cq("search", "register", cwd=repo, env=_env(runtime)).returncode == 0
    status = run_cq("server", "status", env=_env(runtime))
    found = re.search(
        r"memory: (\d+) MB \(daemon (\d+) MB, search processes (\d+) MB, Pyrefly (\d+) MB\)",
        status.stdout,
    )
    assert found, status.stdout
    total, daemon, workers, pyrefly = map(int, found.groups())
    assert daemon > 0 and workers > daemon  # a search process holds cq's search path
    assert abs(total - (daemon + workers + pyrefly)) <= 2  # rounding


def test_a_search_process_that_served_many_roots_is_replaced_between_searches(
    tmp_path: Path,
    runtime: Path,  # noqa: F811
) -> None:
    roots = [
        write_tree(tmp_path / f"r{i}", {f"app{i}.py": "def register(name):\n    return name\n"})
        for i in range(WORKER_MAX_ROOTS + 1)
    ]
    daemon = _start(runtime)
    first = None
    for i, root in enumerate(roots):
        # a search never waits for a process: one that arrived while the fresh process warms
        # would run in-process, so each waits until a process is ready
        deadline = time.monotonic() + 300  # a condition, not a clock: generous on a busy machine
        while not _status(runtime).get("ready") and time.monotonic() < deadline:
            time.sleep(0.1)
        run = run_cq("search", "register", cwd=root, env=_env(runtime))
        assert run.returncode == 0 and run.stderr == "", run.stderr  # none fell back
        assert f"app{i}.py" in run.stdout  # searched its own root
        if i == 0:
            (first,) = _workers(daemon)
    deadline = time.monotonic() + 300  # the retired one exits after its last answer
    while first in _workers(daemon) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert first not in _workers(daemon) and _workers(daemon)  # a fresh process serves on
    status = run_cq("server", "status", env=_env(runtime))
    assert f"{len(roots)} searches served" in status.stdout, status.stdout
