"""One cache dir shared by everything that uses it at once, then every database checked.

For a bounded time (``_SECONDS``) and all at once: searches through the server of two
settings (two servers: two values of ``CQ_CACHE_MAX_MB``, as two installs would be), one-shot
searches (``CQ_SERVER=0``), a long-lived process searching again and again (as ``cq mcp``'s
search process does), ``cq index``, ``cq cache clear`` and ``cq cache prune``, and short
processes that open the store, write and exit (what each one-shot search does, without the
search around it, so many more of them fit). Then every sqlite file of the dir must pass
``PRAGMA integrity_check``, none may have been set aside as corrupt, and no process may have
said the cache was corrupt or unavailable.

Before ``cq.cache.schema._read_ahead`` moved ahead of sqlite's open, this failed within
seconds (the keys database "malformed", set aside with the main one); before
``cq.cache.sharing``, ``cq cache clear`` unlinked the files under the others
("attempt to write a readonly database"). Linux only (the server).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import write_tree

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the server is Linux only")

# Of load; each loop's last command finishes after it. The load takes every core it can get
# for that long, so the suite's run keeps it short: the races it found (below) failed within
# the first seconds. ``CQ_TEST_STRESS_S`` runs it longer, to look for rarer ones.
_SECONDS = float(os.environ.get("CQ_TEST_STRESS_S", "5"))

SOURCE = '''\
def register(name):
    """Register a name in the registry."""
    return [name]


class Registry:
    def add(self, item):
        return register(item)
'''

# Opens the store, writes a search's worth of entries, exits (closing its connection).
_SHORT = """
import os
from cq.cache.store import open_store
store = open_store()
store.put_many("stress", {f"{os.getpid()}-{i}": os.urandom(300) for i in range(30)})
store.get_many("stress", [f"{os.getpid()}-{i}" for i in range(30)])
"""

# Searches in one process until the deadline, its store open all along, as cq mcp's does.
_LONG = """
import sys, time
from cq.cli import main
deadline = time.monotonic() + float(sys.argv[1])
while time.monotonic() < deadline:
    for query in ("register", "where is a name registered"):
        main(["search", "--root", sys.argv[2], query])
"""


def _loop(deadline: float, make: Callable[[int], list[str]], env: dict[str, str], out: list):
    """Run ``make(n)`` as a subprocess again and again until ``deadline``; keep its stderr."""
    n = 0
    while time.monotonic() < deadline:
        proc = subprocess.run(make(n), env=env, capture_output=True, timeout=120)
        out.append((make(n), proc.returncode, proc.stderr.decode(errors="replace")))
        n += 1


def test_a_shared_cache_survives_every_kind_of_user_at_once(tmp_path: Path) -> None:
    repo = write_tree(
        tmp_path / "repo",
        {f"app/m{i}.py": SOURCE.replace("Registry", f"Registry{i}") for i in range(8)},
    )
    cache = tmp_path / "cache"
    runtime = Path(tempfile.mkdtemp(prefix="cqs", dir="/tmp"))  # a socket path is short
    base = {**os.environ, "CQ_CACHE_DIR": str(cache), "XDG_RUNTIME_DIR": str(runtime)}
    served = {**base, "CQ_SERVER": "1"}
    other = {**served, "CQ_CACHE_MAX_MB": "600"}  # another server's settings
    oneshot = {**base, "CQ_SERVER": "0"}
    cq = [sys.executable, "-m", "cq"]
    questions = ("register", "where is a name registered")

    def search(n: int) -> list[str]:
        return [*cq, "search", "--root", str(repo), questions[n % 2]]

    loops: list[tuple[Callable[[int], list[str]], dict[str, str]]] = [
        (search, served),
        (search, other),
        (search, oneshot),
        (lambda n: [*cq, "index", "--root", str(repo)], oneshot),
        (lambda n: [*cq, "cache", "clear" if n % 2 else "prune"], oneshot),
        (lambda n: [sys.executable, "-c", _SHORT], oneshot),
        (lambda n: [sys.executable, "-c", _SHORT], oneshot),
    ]
    runs: list[tuple[list[str], int, str]] = []
    try:
        deadline = time.monotonic() + _SECONDS
        long_lived = subprocess.Popen(
            [sys.executable, "-c", _LONG, str(_SECONDS), str(repo)],
            env=oneshot,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        threads = [
            threading.Thread(target=_loop, args=(deadline, make, env, runs)) for make, env in loops
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        _, err = long_lived.communicate(timeout=120)
        runs.append((["long-lived"], long_lived.returncode, err.decode(errors="replace")))
    finally:
        for env in (served, other):
            subprocess.run([*cq, "server", "stop"], env=env, capture_output=True, timeout=300)
        shutil.rmtree(runtime, ignore_errors=True)

    said = [(argv, code, err) for argv, code, err in runs if _alarming(err)]
    assert not said, said[:3]
    failed = [(argv, code, err[-400:]) for argv, code, err in runs if code not in (0, 1)]
    assert not failed, failed[:3]
    assert len(runs) > len(loops)  # every kind of user ran
    assert not list(cache.glob("*.corrupt"))
    databases = [p for p in cache.rglob("*.sqlite*") if not p.name.endswith(("-wal", "-shm"))]
    assert databases
    for path in databases:
        with contextlib.closing(sqlite3.connect(path)) as db:
            assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)], path


def _alarming(stderr: str) -> bool:
    lowered = stderr.lower()
    words = ("corrupt", "malformed", "unavailable", "readonly", "traceback")
    return any(word in lowered for word in words)
