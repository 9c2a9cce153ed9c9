"""pytest plugin: each failed test (and each skip at setup) as it happens, with its report's
text, to ``$CPUPLUG_DIR/outcomes-<xdist worker>.txt``: a long loaded run's failures can be
read while it runs, not only at its end."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.passed or (report.skipped and report.when != "setup"):
        return
    out = Path(os.environ["CPUPLUG_DIR"])
    out.mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with (out / f"outcomes-{worker}.txt").open("a") as fh:
        head = f"=== {report.outcome} {report.when} {report.nodeid} {report.duration:.1f}s"
        fh.write(f"{head}\n{report.longreprtext[-3000:]}\n")
