"""A forked helper enriches a share of the shown files (``cq/enrich/shown.py``, ``cq/forked.py``):
the outcome is the one this process alone gives, and a cancelled search leaves no helper."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from conftest import run_cq

from cq.enrich import EnrichSettings, enrich_shown
from cq.errors import SearchCancelledError
from cq.forked import Forked
from cq.model import Finding
from cq.model.tuning import EnrichTuning
from cq.parse import Corpus
from tests.enrich_hits import finding_at

_MODULE = '''"""Module {n}."""
import os.path
from collections import OrderedDict


class Registry{n}:
    """Holds handlers."""

    def register(self, name, handler=None):
        table = OrderedDict()
        table[name] = handler
        return os.path.join(name, str(len(table)))

    @staticmethod
    def lookup(name):
        return register(name)


def register(name):
    seen = {{}}
    for step in range({n}):
        seen[step] = name
    return seen
'''


def _tree(root: Path, files: int = 4) -> list[Finding]:
    """``files`` modules (padded with comments to differ in size), and findings of
    ``register``: its definitions and calls, as classification would give them."""
    shown: list[Finding] = []
    for n in range(files):
        rel = f"pkg/mod{n}.py"
        (root / "pkg").mkdir(exist_ok=True)
        (root / rel).write_text(_MODULE.format(n=n) + "# padding\n" * (200 * (n + 1)))
        for line_has, category in (
            ("def register(self", "definition"),
            ("return register(name)", "call"),
            ("def register(name)", "definition"),
        ):
            hit = finding_at(root, rel, "register", line_has)
            shown.append(msgspec.structs.replace(hit, category=category, confidence=0.9))
    return shown


def _enrich(root: Path, shown: list[Finding], helper_min_bytes: int, check=None):  # type: ignore[no-untyped-def]
    tuning = EnrichTuning(helper_min_bytes=helper_min_bytes)
    settings = EnrichSettings(use_store=False, tuning=tuning)
    if check is None:
        return enrich_shown(Corpus(root), shown, settings)
    return enrich_shown(Corpus(root), shown, settings, check)


def _search(root: Path, eager: bool, env: dict[str, str] | None = None) -> dict:
    """``cq search register`` on ``root`` (a fresh process: no other thread), the helper's
    threshold at 0 or out of reach (a profile inside the root), without the standby that
    would compute every hit (``test_enrich_standby.py``)."""
    profile = root / ("eager.toml" if eager else "never.toml")
    profile.write_text(f"[enrich]\nhelper_min_bytes = {0 if eager else 1 << 40}\n")
    argv = ["search", "register", "--root", str(root), "--format", "json", "--no-cache"]
    run = run_cq(*argv, "--profile", str(profile), env={"CQ_STANDBY": "off", **(env or {})})
    assert run.returncode == 0, run.stderr
    return run.json()


def test_a_helper_enriches_part_of_the_files_and_changes_nothing(tmp_path: Path) -> None:
    _tree(tmp_path)
    helped = _search(tmp_path, eager=True)
    alone = _search(tmp_path, eager=False)
    assert "enrich.helper" not in alone["run"]["counters"]
    shown = len(alone["findings"])
    # The helper took the first turn (``cq.forked.Turns``); how many more is the machine's.
    assert 0 < helped["run"]["counters"]["enrich.helper"] <= shown
    assert helped["findings"] == alone["findings"]
    assert helped["summary"]["telemetry"] == alone["summary"]["telemetry"]
    assert any(f.get("symtable") for f in helped["findings"])  # bindings came back too
    assert helped["run"]["counters"]["symtable_compiled"] == 4


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="a pool needs two CPUs")
def test_a_search_that_used_the_pool_still_has_its_enrichment_helper(tmp_path: Path) -> None:
    """The one-shot CLI forks its pool's workers and lets them go once classification is
    done: the pool's threads gone, enrichment may fork its helper (a kept pool's threads
    ruled it out, so an audit-size search enriched on one core)."""
    _tree(tmp_path)
    pool = {"CQ_POOL_MIN_BYTES": "1", "CQ_MAX_WORKERS": "2"}
    helped = _search(tmp_path, eager=True, env=pool)
    alone = _search(tmp_path, eager=False)
    assert helped["run"]["counters"]["pool_workers"] == 2
    assert helped["run"]["counters"]["enrich.helper"] > 0
    assert helped["findings"] == alone["findings"]


def test_no_helper_under_a_libcst_quota_some_hits_reach(tmp_path: Path) -> None:
    """A quota that stops LibCST after a few hits makes a hit's enrichment depend on the hits
    before it: all of them are enriched here, in rank order."""
    shown = _tree(tmp_path)
    settings = EnrichSettings(
        use_store=False, tuning=EnrichTuning(helper_min_bytes=0, libcst_hits=2)
    )
    outcome = enrich_shown(Corpus(tmp_path), shown, settings)
    assert outcome.counters.enrich_helper == 0


def _children() -> set[int]:
    pid = os.getpid()
    found: set[int] = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as fh:
            found |= {int(p) for p in fh.read().split()}
    return found


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")
def test_a_cancelled_enrichment_leaves_no_helper_behind(tmp_path: Path) -> None:
    shown = _tree(tmp_path)
    before = _children()
    calls = 0

    def check() -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise SearchCancelledError("cancelled")

    with pytest.raises(SearchCancelledError):
        _enrich(tmp_path, shown, helper_min_bytes=0, check=check)
    assert _children() == before


def test_a_forked_child_sends_what_its_work_returns() -> None:
    child = Forked.start(lambda: b"x" * 300_000)  # more than a pipe holds
    assert child is not None
    assert child.result() == b"x" * 300_000


def test_a_failed_child_sends_nothing() -> None:
    def fails() -> bytes:
        raise RuntimeError("no")

    child = Forked.start(fails)
    assert child is not None
    assert child.result() is None


_THREADS = """
import threading
from cq.forked import possible
from cq.forked import PROGRESS_THREAD
stop = threading.Event()
alone = possible()
progress = threading.Thread(target=stop.wait, name=PROGRESS_THREAD)
progress.start()
beside_progress = possible()
other = threading.Thread(target=stop.wait)
other.start()
beside_other = possible()
stop.set()
print(alone, beside_progress, beside_other)
"""


def test_no_fork_while_another_thread_runs() -> None:
    """A fresh process forks alone or beside the progress line's thread, never beside any
    other thread."""
    run = subprocess.run([sys.executable, "-c", _THREADS], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True", "True", "False"]


_LONG_LIVED = """
import json, sys, threading
from cq.model import SearchRequest
from cq.pipeline import run_search
from cq.report.json_format import render_json

def search(profile):
    request = SearchRequest(query="register", root=sys.argv[1], profile=profile, use_cache=False)
    got = []
    thread = threading.Thread(target=lambda: got.append(run_search(request)))
    thread.start()
    thread.join()
    return json.loads(render_json(got[0]))

helped, alone = search(sys.argv[2]), search(sys.argv[3])
print(json.dumps([helped, alone]))
"""


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="a pool needs two CPUs")
def test_a_long_lived_process_hands_a_share_to_its_pools_worker(tmp_path: Path) -> None:
    """A process with threads (the server's search processes, ``cq mcp``) cannot fork a
    helper; its pool, kept between searches, takes the share instead (it enriched alone, so
    an audit search through the server enriched on one core where the one-shot CLI used two),
    and the findings are the same."""
    _tree(tmp_path)
    eager, never = tmp_path / "eager.toml", tmp_path / "never.toml"
    eager.write_text("[enrich]\nhelper_min_bytes = 0\n")
    never.write_text(f"[enrich]\nhelper_min_bytes = {1 << 40}\n")
    env = {**os.environ, "CQ_POOL_MIN_BYTES": "1", "CQ_MAX_WORKERS": "2"}
    argv = [sys.executable, "-c", _LONG_LIVED, str(tmp_path), str(eager), str(never)]
    run = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr
    helped, alone = json.loads(run.stdout)
    assert helped["run"]["counters"]["pool_workers"] == 2
    assert 0 < helped["run"]["counters"]["enrich.helper"] < len(alone["findings"])
    assert "enrich.helper" not in alone["run"]["counters"]
    assert helped["findings"] == alone["findings"]
    assert helped["summary"]["telemetry"] == alone["summary"]["telemetry"]
