"""pytest plugin: each test's CPU (its worker's user+sys and the children it waited for), wall
time and start/end on the epoch clock, one line per test, to
``$CPUPLUG_DIR/<$CPUPLUG_RUN>-<xdist worker>.tsv``. The epoch times let a run's timeline be
drawn per worker (what runs in the last minute, which worker idles).

    PYTHONPATH=<this dir> CPUPLUG_DIR=out CPUPLUG_RUN=after python -m pytest -p timeplug ...
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
    cpu, start = _cpu(), time.time()
    yield
    end = time.time()
    out = Path(os.environ["CPUPLUG_DIR"])
    out.mkdir(parents=True, exist_ok=True)
    name = f"{os.environ.get('CPUPLUG_RUN', 'run')}-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
    with (out / f"{name}.tsv").open("a") as fh:
        fh.write(f"{item.nodeid}\t{_cpu() - cpu:.3f}\t{end - start:.3f}\t{start:.3f}\t{end:.3f}\n")


def pytest_sessionstart(session: pytest.Session) -> None:
    """The worker's session start, so collection time shows as the gap before its first test."""
    out = Path(os.environ["CPUPLUG_DIR"])
    out.mkdir(parents=True, exist_ok=True)
    name = f"{os.environ.get('CPUPLUG_RUN', 'run')}-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
    with (out / f"{name}.start").open("a") as fh:
        fh.write(f"{time.time():.3f}\t{_cpu():.3f}\n")
