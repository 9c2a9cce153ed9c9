"""Ranking: score findings and order them best first.

In: classified findings and a ``RankContext`` (patterns, focus, weights, root). Out: the same
findings with ``role`` and ``score`` set (and ``explain`` when asked), sorted by score
descending, ties broken by (file, line, col). Open ``score.py`` for the formula; ``roles.py``
(path conventions) and ``rust_tests.py`` (``#[cfg(test)]`` items) decide the item role,
``signals.py`` holds the query-aware boosts, ``terms.py`` the multi-pattern signal.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from cq.model import Finding, Focus, Pattern, RankWeights, Role
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

    root: str
    patterns: tuple[Pattern, ...]
    focus: Focus = "all"
    weights: RankWeights = msgspec.field(default_factory=RankWeights)
    explain: bool = False
    path_hints: dict[str, float] = {}  # files a rewritten query's text points at, by weight
    use_cache: bool = True  # read and fill cq's cache (Rust ``#[cfg(test)]`` ranges)


def rank_findings(findings: list[Finding], ctx: RankContext) -> list[Finding]:
    """Score and sort; deterministic for identical input."""
    return _score_and_sort(findings, ctx, _file_signal(findings, ctx))


def _file_signal(findings: list[Finding], ctx: RankContext) -> dict[str, float]:
    """Per-file multi-term signal: evidence for a rewritten query, plain coverage otherwise."""
    if is_rewritten(ctx.patterns):
        return file_evidence(findings, ctx.patterns, ctx.path_hints)
    return file_coverage(findings, ctx.patterns)


def _score_and_sort(
    findings: list[Finding], ctx: RankContext, coverage: dict[str, float]
) -> list[Finding]:
    names = queried_names(ctx.patterns)
    boost = ctx.weights.evidence if is_rewritten(ctx.patterns) else ctx.weights.coverage
    roles = _Roles(Path(ctx.root), findings, ctx.use_cache)
    scored: list[Finding] = []
    for f in findings:
        role = roles.of(f)
        parts = breakdown(
            category=f.category,
            role=role,
            confidence=f.confidence,
            focus=ctx.focus,
            depth=nesting_depth(f.containing_scope),
            exact_definition=exact_definition(f, names, ctx.weights),
            filename=filename_match(f.file, names, ctx.weights),
            terms=terms_multiplier(f, ctx.patterns, coverage.get(f.file, 0.0), boost),
            weights=ctx.weights,
        )
        scored.append(
            msgspec.structs.replace(
                f, role=role, score=total(parts), explain=parts if ctx.explain else None
            )
        )
    return sorted(scored, key=order_key)


def rerank_shown(findings: list[Finding], ctx: RankContext, limit: int) -> list[Finding]:
    """Score the shown prefix again after enrichment moved confidences; the rest stays put.

    Only the first ``limit`` findings (all when ``limit`` is 0) are re-sorted among themselves,
    so nothing unshown moves into the report and scores match the confidences printed.
    """
    cut = len(findings) if limit <= 0 else min(limit, len(findings))
    signal = _file_signal(findings, ctx)  # over all findings, as in the first pass
    return _score_and_sort(findings[:cut], ctx, signal) + findings[cut:]


def order_key(f: Finding) -> tuple[float, str, int, int]:
    """Best score first, then path, line, column: the one total order every view keeps."""
    return (-f.score, f.file, f.line, f.col)


class _Roles:
    """Path roles, refined for Rust hits inside ``#[cfg(test)]`` items."""

    def __init__(self, root: Path, findings: list[Finding], use_cache: bool) -> None:
        self.root = root
        self.by_path: dict[str, Role] = {}
        rust = sorted({f.file for f in findings if f.language == "rust"})
        self.test_ranges = cfg_test_ranges(root, rust, use_cache) if rust else {}

    def of(self, f: Finding) -> Role:
        role = self.by_path.get(f.file)
        if role is None:
            role = path_role(f.file)
            if role == "src" and f.language == "rust":
                role = "test" if declared_under_cfg_test(self.root, f.file) else role
            self.by_path[f.file] = role
        if role == "src" and f.language == "rust" and in_ranges(f.line, self.test_ranges[f.file]):
            return "test"
        return role


__all__ = [
    "RankContext",
    "is_exact_definition",
    "order_key",
    "queried_names",
    "rank_findings",
    "rerank_shown",
]
