"""Fail-open stage runner: one stage's exception becomes its degrade reason, never the search's.

A stage is a zero-argument callable. It returns its result, raises ``Skip`` when it does not
apply to the hit (status ``skipped``), or raises anything else (status ``degraded``, reason
``"<stage>: <ExceptionType>: <first line of the message>"``). Wall time per stage is kept
apart from the payload: it is volatile and goes to ``RunInfo`` only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from cq.model import StageName, StageReport

T = TypeVar("T")
_REASON_CHARS = 160


class Skip(Exception):
    """The stage does not apply to this hit; the message says why."""


class StageRunner:
    """Runs the stages of one hit, collecting reports, degrade reasons and timings."""

    def __init__(self) -> None:
        self.reports: list[StageReport] = []
        self.reasons: list[str] = []
        self.timings_ms: dict[str, float] = {}
        self.complete = True  # False when a stage was skipped for the time budget

    def run(self, stage: StageName, body: Callable[[], T]) -> T | None:
        started = time.perf_counter()
        try:
            value = body()
        except Skip as skip:
            self.reports.append(StageReport(stage=stage, status="skipped", reason=str(skip)))
            return None
        except Exception as exc:  # fail open: every stage error is data, not a crash
            reason = f"{stage}: {type(exc).__name__}: {_first_line(str(exc))}"
            self.reports.append(StageReport(stage=stage, status="degraded", reason=reason))
            self.reasons.append(reason)
            return None
        finally:
            elapsed = (time.perf_counter() - started) * 1000
            self.timings_ms[stage] = self.timings_ms.get(stage, 0.0) + elapsed
        self.reports.append(StageReport(stage=stage, status="applied"))
        return value

    def status(self) -> str:
        if self.reasons:
            return "degraded"
        if any(r.status == "applied" for r in self.reports):
            return "applied"
        return "skipped"


def _first_line(message: str) -> str:
    line = message.strip().splitlines()[0] if message.strip() else ""
    return line if len(line) <= _REASON_CHARS else line[: _REASON_CHARS - 1] + "…"
