"""Ranking: score findings and order them best first.

In: findings with classification. Out: the same findings with ``score`` set, sorted by score
descending, ties broken by (file, line, col).
"""

from __future__ import annotations

import msgspec

from cq.model import Finding


def rank_findings(findings: list[Finding]) -> list[Finding]:
    """Score and sort; deterministic for identical input."""
    scored = [msgspec.structs.replace(f, score=round(f.confidence, 4)) for f in findings]
    return sorted(scored, key=lambda f: (-f.score, f.file, f.line, f.col))
