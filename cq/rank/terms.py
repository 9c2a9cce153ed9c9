"""Multi-term signal: hits on heavier patterns, in files covering more of the terms, rank higher.

A rewritten query searches several patterns at once (``Pattern.weight`` says what a hit on each
is worth; ``RawMatch.patterns`` says which ones a hit matched). A single-pattern query gets a
multiplier of exactly 1. The numbers here are the rewriter's to tune.
"""

from __future__ import annotations

from collections.abc import Iterable

from cq.model import Finding, Pattern


def file_coverage(findings: Iterable[Finding], patterns: tuple[Pattern, ...]) -> dict[str, float]:
    """Per file: weight of the distinct patterns it matched over the weight of all, in [0, 1]."""
    total = sum(p.weight for p in patterns)
    if len(patterns) < 2 or total <= 0:
        return {}
    seen: dict[str, set[int]] = {}
    for f in findings:
        seen.setdefault(f.file, set()).update(f.patterns)
    return {
        path: sum(patterns[i].weight for i in hits if 0 <= i < len(patterns)) / total
        for path, hits in seen.items()
    }


def terms_multiplier(
    finding: Finding, patterns: tuple[Pattern, ...], coverage: float, coverage_boost: float
) -> float:
    """The hit's own pattern weight (relative to the heaviest) times its file's coverage bonus."""
    if len(patterns) < 2:
        return 1.0
    heaviest = max(p.weight for p in patterns)
    own = [patterns[i].weight for i in finding.patterns if 0 <= i < len(patterns)]
    strength = max(own) / heaviest if own and heaviest > 0 else 1.0
    return strength * (1.0 + coverage_boost * coverage)
