"""Counting what enrichment did, per language: deterministic counts for ``Summary.telemetry``
and volatile stage timings for ``RunInfo``.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from cq.model import Enrichment, Telemetry


class EnrichTelemetry:
    """Accumulates one search's counts and timings."""

    def __init__(self) -> None:
        self.counts: dict[str, Counter[str]] = defaultdict(Counter)
        self.timings_ms: Counter[str] = Counter()
        self.counters: Counter[str] = Counter()

    def record(self, language: str, enrichment: Enrichment) -> None:
        counts = self.counts[f"enrichment.{language}"]
        counts[enrichment.status] += 1
        stages = enrichment.stages
        for stage in stages.__struct_fields__ if stages is not None else ():
            status = getattr(stages, stage)
            if status in ("degraded", "skipped"):
                counts[f"{status}.{stage}"] += 1
        if any(r.startswith("crosscheck:") for r in enrichment.degrade_reasons):
            counts["degraded.crosscheck"] += 1
        if enrichment.agreement is not None:
            counts[f"agreement.{enrichment.agreement.status}"] += 1
        if enrichment.dropped_fields:
            counts["budget_trimmed"] += 1
        if enrichment.status == "skipped" and "time budget" in enrichment.degrade_reasons:
            counts["skipped.time_budget"] += 1
        if enrichment.status == "skipped" and "hit bound" in enrichment.degrade_reasons:
            counts["skipped.hit_bound"] += 1

    def time(self, language: str, stage_ms: dict[str, float]) -> None:
        for stage, ms in stage_ms.items():
            self.timings_ms[f"enrich.{language}.{stage}"] += ms

    def summary(self) -> Telemetry:
        """The counts per language, each sorted by label."""
        return Telemetry(
            enrichment_python=self._sorted("python"), enrichment_rust=self._sorted("rust")
        )

    def _sorted(self, language: str) -> dict[str, int] | None:
        counts = self.counts.get(f"enrichment.{language}")
        return dict(sorted(counts.items())) if counts is not None else None

    def run_timings(self) -> dict[str, float]:
        return {k: round(v, 1) for k, v in sorted(self.timings_ms.items())}
