"""A long-lived cq's Pyrefly servers leave the CPU to the search it runs.

In the server's search processes and ``cq mcp``'s, Pyrefly checks trees in the background
for answers later searches read. While a search that does not wait for those answers runs,
the servers stop; they go on after it. Against the real ``pyrefly lsp``, in a child process
(the process's pool is its own: the warm state would leak into the other tests here). Linux
only: a process's state is read from /proc.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cq.semantic.server import pyrefly_binary
from tests.conftest import write_tree

pytestmark = [
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc"),
    pytest.mark.skipif(pyrefly_binary() is None, reason="needs pyrefly"),
]

_LONG_LIVED = """
import sys, threading, time
from pathlib import Path
from cq.semantic.pool import pool
from cq.semantic.server import pyrefly_binary
from cq.server.warm import search_begins, warm_between

def state(server, wanted):
    # a stop or a continue reaches every thread of the process in a moment, not at once
    deadline = time.monotonic() + 120  # a hang bound: a stop that never comes
    while True:
        stat = Path(f"/proc/{server.process.pid}/stat").read_text()
        now = stat.rsplit(")", 1)[1].split()[0]
        if now in wanted or time.monotonic() > deadline:
            return now
        time.sleep(0.01)

servers = pool()
servers.keep_warm()
one, two = (servers.get(root, pyrefly_binary()) for root in sys.argv[1:3])
assert one.initialized.wait(120) and two.initialized.wait(120)
searching = threading.Event()
search_begins(searching)
print("searching", state(one, "T"), state(two, "T"))
servers.resume(sys.argv[2])  # this search waits for the second root's answers
print("waiting", state(one, "T"), state(two, "SR"))
warm_between(searching)
print("after", state(one, "SR"), state(two, "SR"), flush=True)
"""


def test_pyrefly_servers_stop_while_a_search_that_does_not_wait_for_them_runs(
    tmp_path: Path,
) -> None:
    roots = [
        write_tree(
            tmp_path / name, {"pkg/mod.py": "def handler(value: int) -> int:\n    return value\n"}
        )
        for name in ("one", "two")
    ]
    run = subprocess.run(
        [sys.executable, "-c", _LONG_LIVED, *map(str, roots)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    states = {line.split()[0]: line.split()[1:] for line in run.stdout.splitlines()}
    assert states["searching"] == ["T", "T"]  # stopped: neither is waited for
    assert states["waiting"][0] == "T" and states["waiting"][1] != "T"
    assert "T" not in states["after"]  # both go on after the search
