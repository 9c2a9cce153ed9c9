"""Fail-open stage runner: one stage's exception becomes its degrade reason, never the search's.

A stage is a zero-argument callable. It returns its result (status ``applied``), raises
``Skip`` when it does not apply to the hit (no status recorded), raises ``Limited`` when a
limit stops it (status ``skipped``, reason kept), or raises anything else (status
``degraded``, reason ``"<stage>: <ExceptionType>: <first line of the message>"``). Wall time
per stage is kept apart from the payload: it is volatile and goes to ``RunInfo`` only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import msgspec

from cq.model import EnrichmentStatus, StageName, StageStatus

T = TypeVar("T")
_REASON_CHARS = 160


class Skip(Exception):
    """The stage does not apply to this hit (not a function, not an import, ...)."""


QUOTA = "hit quota"  # LibCST's per-search hit quota: a limit that does not depend on the clock


class Limited(Exception):
    """A limit stopped the stage (time budget, file size, encoding); the message says which."""


class StageRunner:
    """Runs the stages of one hit, collecting statuses, degrade reasons and timings."""

    def __init__(self) -> None:
        self.statuses: dict[str, EnrichmentStatus] = {}
        self.reasons: list[str] = []
        self.timings_ms: dict[str, float] = {}
        self.complete = True  # False when the clock stopped a stage: then nothing is stored

    def run(self, stage: StageName, body: Callable[[], T]) -> T | None:
        started = time.perf_counter()
        try:
            value = body()
        except Skip:
            return None
        except Limited as limit:
            self.statuses[stage] = "skipped"
            self.reasons.append(f"{stage}: {limit}")
            return None
        except Exception as exc:  # fail open: every stage error is data, not a crash
            self.statuses[stage] = "degraded"
            self.reasons.append(f"{stage}: {type(exc).__name__}: {_first_line(str(exc))}")
            return None
        finally:
            elapsed = (time.perf_counter() - started) * 1000
            self.timings_ms[stage] = self.timings_ms.get(stage, 0.0) + elapsed
        self.statuses[stage] = "applied"
        return value

    def stage_status(self) -> StageStatus:
        return msgspec.convert(self.statuses, StageStatus)

    def status(self) -> EnrichmentStatus:
        if self.reasons:
            return "degraded"
        if "applied" in self.statuses.values():
            return "applied"
        return "skipped"


def _first_line(message: str) -> str:
    line = message.strip().splitlines()[0] if message.strip() else ""
    return line if len(line) <= _REASON_CHARS else line[: _REASON_CHARS - 1] + "…"
