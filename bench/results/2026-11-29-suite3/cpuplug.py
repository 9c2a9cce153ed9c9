"""pytest plugin: each test's CPU (its worker's user+sys and the children it waited for) and
wall time, one line per test, to ``$CPUPLUG_DIR/<$CPUPLUG_RUN>-<xdist worker>.tsv``.

    PYTHONPATH=<this dir> CPUPLUG_DIR=out CPUPLUG_RUN=after python -m pytest -p cpuplug ...
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def _cpu() -> float:
    mine = resource.getrusage(resource.RUSAGE_SELF)
    waited = resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + waited.ru_utime + waited.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    cpu, wall = _cpu(), time.monotonic()
    yield
    out = Path(os.environ["CPUPLUG_DIR"])
    out.mkdir(parents=True, exist_ok=True)
    name = f"{os.environ.get('CPUPLUG_RUN', 'run')}-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
    with (out / f"{name}.tsv").open("a") as fh:
        fh.write(f"{item.nodeid}\t{_cpu() - cpu:.3f}\t{time.monotonic() - wall:.3f}\n")
