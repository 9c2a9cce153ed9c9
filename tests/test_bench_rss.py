"""bench/cq_rss.py: cq's own peak RSS apart from its children's (Pyrefly, workers, rg)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import write_tree

from bench._common import time_cq

MODULE = '''"""Schedulers."""


class StepScheduler:
    def step(self, epoch):
        return epoch + 1


def make_scheduler():
    return StepScheduler()
'''


def test_main_and_children_peaks_apart_and_wait4_is_their_max(tmp_path: Path) -> None:
    tree = write_tree(tmp_path / "tree", {"sched.py": MODULE, "use.py": "from sched import *\n"})
    run = time_cq(
        ["search", "StepScheduler", "--root", str(tree), "--format", "json"],
        env={"CQ_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert run.returncode == 0
    report = json.loads(run.stdout)  # the wrapper leaves cq's output alone
    assert any(f["file"] == "sched.py" for f in report["findings"])
    assert run.main_rss_mb > 0
    assert run.children_rss_mb > 0  # rg at least ran as a child and was reaped
    # Written after cq's exit hooks reaped every child: what wait4 reports is the larger one.
    assert abs(run.max_rss_mb - max(run.main_rss_mb, run.children_rss_mb)) <= 1
