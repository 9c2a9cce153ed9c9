"""Multi-term signal: hits on heavier patterns, in files covering more of the terms, rank higher.

A rewritten query searches several patterns at once (``Pattern.weight`` says what a hit on each
is worth; ``RawMatch.patterns`` says which ones a hit matched). A single-pattern query gets a
multiplier of exactly 1. For a rewritten query (any pattern whose ``source`` is a rewriter) the
per-file signal is *evidence* instead of plain coverage: the distinct patterns a file matches,
each worth its weight times its rarity among the matched files (an idf), doubled where the file
defines the name, plus the files the text pointed at (``path_hints``: traceback frames,
imports). That lets the files an issue talks about rise above files that merely share a word.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

from cq.candidates import DOTTED_SOURCE
from cq.model import Finding, Pattern, RankWeights


def is_rewritten(patterns: tuple[Pattern, ...]) -> bool:
    """True when some pattern came from a rewriter rather than the user's own text (a dotted
    query's last name is the user's own)."""
    return any(p.source not in ("query", DOTTED_SOURCE) for p in patterns)


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


def file_evidence(
    findings: Iterable[Finding],
    patterns: tuple[Pattern, ...],
    hints: dict[str, float],
    weights: RankWeights,
) -> dict[str, float]:
    """Per file, in [0, 1]: rarity-weighted distinct patterns, definitions (counting
    ``weights.evidence_defines`` times) and path hints (one of weight 1 worth
    ``weights.evidence_hint`` average-rarity pattern hits)."""
    matched: dict[str, set[int]] = {}
    defined: dict[str, set[int]] = {}
    for f in findings:
        own = {i for i in f.patterns if 0 <= i < len(patterns)}
        matched.setdefault(f.file, set()).update(own)
        if f.category == "definition":
            defined.setdefault(f.file, set()).update(own)
    if not matched:
        return {}
    n_files = len(matched)
    df = Counter(i for hits in matched.values() for i in hits)
    idf = {i: math.log(1 + n_files / n) for i, n in df.items()}
    mean_idf = sum(idf.values()) / len(idf) if idf else 1.0
    raw: dict[str, float] = {}
    for path, hits in matched.items():
        mine = defined.get(path, set())
        raw[path] = sum(
            patterns[i].weight * idf[i] * (weights.evidence_defines if i in mine else 1.0)
            for i in hits
        ) + weights.evidence_hint * mean_idf * hints.get(path, 0.0)
    top = max(raw.values())
    return {path: score / top for path, score in raw.items()} if top > 0 else {}


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
