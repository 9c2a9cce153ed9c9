"""What a rewriter hands the pipeline: patterns, focus and path hints, under hard caps."""

from __future__ import annotations

import msgspec

from cq.model import Focus, Pattern, RewriteSummary
from cq.model.tuning import RewriteTuning


class RewritePlan(msgspec.Struct, frozen=True, kw_only=True):
    """One rewrite. ``path_hints`` maps repository files the text points at to a weight."""

    patterns: tuple[Pattern, ...] = ()
    focus: Focus = "all"
    path_hints: dict[str, float] = {}
    rewriter: str = "offline"
    fallback_reason: str | None = None
    subject: str | None = None  # the name "it" refers to, when the query refers back


class Rewrite(msgspec.Struct, frozen=True, kw_only=True):
    """A rewrite as the pipeline uses it: the plan to search, the summary to report."""

    plan: RewritePlan
    summary: RewriteSummary


def cap_patterns(patterns: list[Pattern], t: RewriteTuning) -> tuple[Pattern, ...]:
    """Heaviest first (ties keep their order), deduplicated, at most the caps per kind
    (``t.max_identifier_patterns``, ``t.max_literal_patterns``)."""
    seen: set[tuple[str, str]] = set()
    kept: list[Pattern] = []
    counts = {"identifier": 0, "literal": 0}
    caps = {"identifier": t.max_identifier_patterns, "literal": t.max_literal_patterns}
    for p in sorted(patterns, key=lambda p: -p.weight):
        key = (p.kind, p.text)
        if key in seen or p.kind not in caps or counts[p.kind] >= caps[p.kind]:
            continue
        seen.add(key)
        counts[p.kind] += 1
        kept.append(p)
    return tuple(kept)
