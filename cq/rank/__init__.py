"""Ranking: score findings and order them best first.

In: classified findings, a ``RankContext`` (patterns, focus, weights) and the search's
``Corpus``. Out: ``Ranked``: every finding with ``role`` and ``score`` set (and ``explain``
when asked), the report's limit of them picked to show. ``final_order`` runs once, after
enrichment moved the shown findings' confidence: score descending, ties broken by
(file, line, col). Open ``score.py`` for the formula; ``roles.py``
(path conventions) and ``rust_tests.py`` (``#[cfg(test)]`` items) decide the item role,
``signals.py`` holds the query-aware boosts, ``terms.py`` the multi-pattern signal.
"""

from __future__ import annotations

import heapq

import msgspec

from cq.model import Finding, Focus, Pattern, RankWeights, Role, ScoreBreakdown
from cq.parse import Corpus
from cq.rank.roles import path_role
from cq.rank.rust_tests import cfg_test_ranges, declared_under_cfg_test, in_ranges
from cq.rank.score import breakdown, total
from cq.rank.signals import (
    exact_definition,
    filename_match,
    is_exact_definition,
    nesting_depth,
    queried_names,
)
from cq.rank.terms import file_coverage, file_evidence, is_rewritten, terms_multiplier


class RankContext(msgspec.Struct, frozen=True, kw_only=True):
    """What the score needs besides the findings themselves."""

    patterns: tuple[Pattern, ...]
    focus: Focus = "all"
    weights: RankWeights = msgspec.field(default_factory=RankWeights)
    explain: bool = False
    path_hints: dict[str, float] = {}  # files a rewritten query's text points at, by weight
    use_cache: bool = True  # read and fill cq's cache (Rust ``#[cfg(test)]`` ranges)


class Ranked(msgspec.Struct, frozen=True):
    """Scored findings: the ``shown`` ones (best first, the report's limit of them) with
    their score breakdowns, and the ``rest`` (in no particular order)."""

    shown: list[Finding]
    parts: list[ScoreBreakdown]
    rest: list[Finding]


def score_findings(findings: list[Finding], ctx: RankContext, corpus: Corpus, limit: int) -> Ranked:
    """Score every finding and pick the best ``limit`` (all when 0) to show."""
    names = queried_names(ctx.patterns)
    boost = ctx.weights.evidence if is_rewritten(ctx.patterns) else ctx.weights.coverage
    signal = _file_signal(findings, ctx)
    roles = _Roles(corpus, findings, ctx.use_cache)
    scored: list[Finding] = []
    parts: list[ScoreBreakdown] = []
    for f in findings:
        role = roles.of(f)
        b = breakdown(
            category=f.category,
            role=role,
            confidence=f.confidence,
            focus=ctx.focus,
            depth=nesting_depth(f.containing_scope),
            exact_definition=exact_definition(f, names, ctx.weights),
            filename=filename_match(f.file, names, ctx.weights),
            terms=terms_multiplier(f, ctx.patterns, signal.get(f.file, 0.0), boost),
            weights=ctx.weights,
        )
        parts.append(b)
        scored.append(
            msgspec.structs.replace(
                f, role=role, score=total(b), explain=b if ctx.explain else None
            )
        )
    count = len(scored) if limit <= 0 else min(limit, len(scored))
    best = heapq.nsmallest(count, range(len(scored)), key=lambda i: order_key(scored[i]))
    chosen = set(best)
    rest = [f for i, f in enumerate(scored) if i not in chosen]
    return Ranked(shown=[scored[i] for i in best], parts=[parts[i] for i in best], rest=rest)


def final_order(ranked: Ranked, shown: list[Finding], ctx: RankContext) -> list[Finding]:
    """The one total order of the report: the ``shown`` findings (``ranked.shown`` after
    enrichment moved their confidence) scored with their final confidence and sorted, then
    the rest. Nothing unshown moves into the report, and scores match the confidences
    printed."""
    final: list[Finding] = []
    for f, b in zip(shown, ranked.parts, strict=True):
        again = msgspec.structs.replace(b, confidence=round(f.confidence, 4))
        final.append(
            msgspec.structs.replace(f, score=total(again), explain=again if ctx.explain else None)
        )
    return sorted(final, key=order_key) + sorted(ranked.rest, key=order_key)


def rank_findings(findings: list[Finding], ctx: RankContext, corpus: Corpus) -> list[Finding]:
    """Score and sort every finding (no enrichment in between); deterministic."""
    ranked = score_findings(findings, ctx, corpus, 0)
    return final_order(ranked, ranked.shown, ctx)


def _file_signal(findings: list[Finding], ctx: RankContext) -> dict[str, float]:
    """Per-file multi-term signal: evidence for a rewritten query, plain coverage otherwise."""
    if is_rewritten(ctx.patterns):
        return file_evidence(findings, ctx.patterns, ctx.path_hints, ctx.weights)
    return file_coverage(findings, ctx.patterns)


def order_key(f: Finding) -> tuple[float, str, int, int]:
    """Best score first, then path, line, column: the one total order every view keeps."""
    return (-f.score, f.file, f.line, f.col)


class _Roles:
    """Path roles, refined for Rust hits inside ``#[cfg(test)]`` items."""

    def __init__(self, corpus: Corpus, findings: list[Finding], use_cache: bool) -> None:
        self.corpus = corpus
        self.by_path: dict[str, Role] = {}
        rust = sorted({f.file for f in findings if f.language == "rust"})
        self.test_ranges = cfg_test_ranges(corpus, rust, use_cache) if rust else {}

    def of(self, f: Finding) -> Role:
        role = self.by_path.get(f.file)
        if role is None:
            role = path_role(f.file)
            if role == "src" and f.language == "rust":
                role = "test" if declared_under_cfg_test(self.corpus, f.file) else role
            self.by_path[f.file] = role
        if role == "src" and f.language == "rust" and in_ranges(f.line, self.test_ranges[f.file]):
            return "test"
        return role


__all__ = [
    "RankContext",
    "Ranked",
    "final_order",
    "is_exact_definition",
    "order_key",
    "queried_names",
    "rank_findings",
    "score_findings",
]
