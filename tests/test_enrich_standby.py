"""The enrichment's standby (``cq/enrich/standby.py``, ``cq.prefork.Standby``): a one-shot
search of a query it has not made forks a child that imports LibCST while the search
classifies, and hands it the shown hits to compute. The answer is the one the search gives
without it; a search made before forks none; a child that fails costs time, never the
answer. Real CLI processes, real forks and pipes."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import msgspec
import pytest
from conftest import run_cq
from test_enrich_helper import _children

from cq.enrich.python import may_resolve
from cq.prefork import Standby
from tests.enrich_hits import enrich, finding_at

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="cq forks helpers on Linux only")

_MODULE = '''"""Module {n}."""
from collections import OrderedDict


class Registry{n}:
    def register(self, name, handler=None):
        table = OrderedDict()
        table[name] = handler
        return table


def register(name):
    registry = Registry{n}()
    return registry.register(name) or OrderedDict()
'''


def _tree(root: Path, files: int = 3) -> None:
    (root / "pkg").mkdir()
    for n in range(files):
        (root / f"pkg/mod{n}.py").write_text(_MODULE.format(n=n))


def _search(root: Path, query: str, *extra: str, standby: str = "on", cache: Path) -> dict:
    """``cq search QUERY`` in a fresh process with its own cache dir, ``standby`` the
    ``CQ_STANDBY`` setting (on: forked whether a core is idle or not, as the suite keeps
    them busy)."""
    profile = root / "wait.toml"
    # waited for as long as it takes: the tree is small, the machine may be busy
    profile.write_text("[enrich]\nstandby_wait_ms = 600000\n")
    env = {"CQ_CACHE_DIR": str(cache), "CQ_SERVER": "0", "CQ_STANDBY": standby}
    argv = ["search", query, "--root", str(root), "--format", "json", *extra]
    run = run_cq(*argv, "--profile", str(profile), env=env)
    assert run.returncode == 0, run.stderr
    return run.json()


def test_the_standby_computes_a_first_search_and_changes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    _tree(root)
    stood = _search(root, "OrderedDict", cache=tmp_path / "a")
    alone = _search(root, "OrderedDict", standby="off", cache=tmp_path / "b")
    counters = stood["run"]["counters"]
    # every hit computed from its file was the standby's, and only there was one
    assert counters["enrich.standby"] == counters["enrich.computed"] > 0
    assert "enrich.standby" not in alone["run"]["counters"]
    assert stood["findings"] == alone["findings"]
    assert stood["summary"]["telemetry"] == alone["summary"]["telemetry"]
    # LibCST's scopes ran in the standby: the imported name's uses are resolved
    resolved = [f for f in stood["findings"] if (f.get("enrichment") or {}).get("resolution")]
    assert resolved


def test_the_default_gives_the_same_answer_with_a_core_idle_or_not(tmp_path: Path) -> None:
    """``auto`` forks a standby only while a core is idle, which the suite's load makes
    change from run to run: either way, the answer is the one without a standby."""
    root = tmp_path / "tree"
    root.mkdir()
    _tree(root)
    alone = _search(root, "OrderedDict", standby="off", cache=tmp_path / "off")
    for run in range(3):
        auto = _search(root, "OrderedDict", standby="auto", cache=tmp_path / f"auto{run}")
        assert auto["findings"] == alone["findings"]
        assert auto["summary"]["telemetry"] == alone["summary"]["telemetry"]


def test_a_search_run_before_forks_no_standby(tmp_path: Path) -> None:
    """The same command line again, after a file changed: its hits are computed in this
    process, as the command line is remembered (its hits are mostly stored); another
    command line has a standby."""
    root = tmp_path / "tree"
    root.mkdir()
    _tree(root, files=6)
    cache = tmp_path / "cache"
    first = _search(root, "OrderedDict", cache=cache)
    assert first["run"]["counters"]["enrich.standby"] > 0
    changed = root / "pkg/mod0.py"
    changed.write_text("# changed\n" + changed.read_text())
    repeat = _search(root, "OrderedDict", cache=cache)
    assert repeat["run"]["counters"]["enrich.computed"] > 0
    assert "enrich.standby" not in repeat["run"]["counters"]
    other = _search(root, "handler", cache=cache)
    assert other["run"]["counters"]["enrich.standby"] > 0


def test_no_standby_is_asked_when_no_hit_needs_libcst(tmp_path: Path) -> None:
    """Hits in strings and definitions' names: nothing for LibCST's scopes, so this process
    computes them (its own helper or alone) and the standby is dismissed."""
    root = tmp_path / "tree"
    root.mkdir()
    (root / "a.py").write_text('def zebra():\n    return "zebra"\n')
    found = _search(root, "zebra", cache=tmp_path / "cache")
    assert found["run"]["counters"]["enrich.computed"] == 2
    assert "enrich.standby" not in found["run"]["counters"]


_READY = "readied"


def _ready() -> None:
    """What the child readied is there when it works: here, the nice value it readied at."""
    import threading

    os.environ[_READY] = str(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))


def _echo(request: bytes) -> bytes:
    import threading

    working = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    return f"{os.environ.get(_READY)}:{working}:".encode() + request[::-1]


def test_a_standby_readies_lowered_then_answers_its_one_request() -> None:
    standby = Standby.start(_ready, _echo)
    assert standby is not None
    assert standby.wait_ready(60)
    asked = standby.ask(b"abc" * 100_000)  # more than a pipe holds, each way
    assert asked is not None
    own = os.getpriority(os.PRIO_PROCESS, 0)
    readied, working, echoed = asked.result().split(b":", 2)  # type: ignore[union-attr]
    # its imports ran lowered, its work at this process's priority
    assert (int(readied), int(working)) == (min(19, own + Standby.NICE), own)
    assert echoed == b"cba" * 100_000
    assert _READY not in os.environ  # readied in the child only


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")
def test_a_dismissed_standby_is_gone() -> None:
    before = _children()
    standby = Standby.start(_ready, _echo)
    assert standby is not None
    standby.dismiss()
    assert _children() == before


def _fails() -> None:
    raise RuntimeError("not ready")


def test_a_standby_that_failed_is_never_ready_and_answers_none() -> None:
    """The caller then computes the request's work itself."""
    standby = Standby.start(_fails, _echo)
    assert standby is not None
    assert not standby.wait_ready(60)
    asked = standby.ask(b"x" * 1_000_000)
    assert asked is None or asked.result() is None


_CALLS = """import os
import os.path as osp
from collections import (
    OrderedDict,
    defaultdict,
)


class Box:
    def join(self, *parts):
        return self.inner.join(parts)


def join(a, b):
    local = Box()
    local.join(a)
    os.path.join(a, b)
    osp.join(a)
    OrderedDict().join()
    defaultdict.join(a)
    return join(a, b)
"""


def test_the_standby_is_asked_for_every_hit_libcst_reads(tmp_path: Path) -> None:
    """``may_resolve`` tells, before any stage, which hits LibCST may read: never one it
    reads is missed (this process would pay LibCST's import), and a method called on a
    receiver no import binds is told apart (the standby would work for nothing)."""
    (tmp_path / "calls.py").write_text(_CALLS)
    hits = []
    for line_has in ("def join(self", "self.inner.join", "def join(a", "local.join"):
        hits.append((line_has, "definition" if "def " in line_has else "callsite"))
    for line_has in ("os.path.join", "osp.join", "OrderedDict().join", "defaultdict.join"):
        hits.append((line_has, "callsite"))
    hits.append(("return join", "callsite"))
    shown = [
        msgspec.structs.replace(finding_at(tmp_path, "calls.py", "join", has), category=kind)
        for has, kind in hits
    ]
    data = (tmp_path / "calls.py").read_bytes()
    lines = data.split(b"\n")
    told = [
        may_resolve(f, lines[f.line - 1][: f.col], data) for f in shown
    ]  # ASCII: columns are bytes
    read = [e.stages is not None and e.stages.libcst is not None for e in enrich(tmp_path, *shown)]
    assert [t for t, r in zip(told, read, strict=True) if r and not t] == []
    assert sum(read) >= 4  # the imported receivers and the bare call
    assert told[:4] == [False, False, False, False]  # definitions, self, a local


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def _settles_in(pid: int, stopped: bool) -> bool:
    """Whether the process is (or is not) stopped within 10 s: a signal is delivered when
    the kernel next schedules it."""
    import time

    deadline = time.monotonic() + 10
    while (_state(pid) == "T") != stopped:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def _slow_ready() -> None:
    import time

    time.sleep(60)  # readying until dismissed


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="needs /proc")
def test_rg_runs_with_the_standbys_still_readying_stopped() -> None:
    """``held_still`` (around rg's runs) stops a standby still importing, and lets it go on
    after; a ready one, waiting on its pipe, is left alone."""
    from cq.prefork import held_still

    readying = Standby.start(_slow_ready, _echo)
    ready = Standby.start(_ready, _echo)
    assert readying is not None and ready is not None
    try:
        assert ready.wait_ready(60)
        with held_still():
            assert _settles_in(readying.helper.pid, stopped=True)
            assert _state(ready.helper.pid) != "T"
        assert _settles_in(readying.helper.pid, stopped=False)
    finally:
        readying.dismiss()
        ready.dismiss()
