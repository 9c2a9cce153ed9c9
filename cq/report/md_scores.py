"""The Scores section (``--explain``): how each shown finding's score was made."""

from __future__ import annotations

from cq.model import (
    Finding,
    ScoreBreakdown,
)
from cq.report.md_finding import where_of


def scores(findings: tuple[Finding, ...]) -> list[str]:
    """With ``--explain``: every shown finding in rank order with its score formula, each
    factor named by the tuned number it comes from (``cq.model.tuning``, whose notes say
    where each value came from)."""
    lines = [
        f"{rank}. {where_of(f)} {f.category} ({f.role}): {_formula(f, f.explain)}"
        for rank, f in enumerate(findings, 1)
        if f.explain is not None
    ]
    return ["## Scores (rank order)", "", *lines] if lines else []


def _formula(f: Finding, b: ScoreBreakdown) -> str:
    boosts = [
        f"rank.exact_definition {b.exact_definition:g}" if b.exact_definition != 1 else "",
        f"rank.filename_exact|partial {b.filename:g}" if b.filename != 1 else "",
        f"rank.name_cut {b.name_cut:g}" if b.name_cut != 1 else "",
        f"terms {b.terms:g}: pattern weight × rank.coverage|evidence" if b.terms != 1 else "",
    ]
    named = ", ".join(x for x in boosts if x) or "none"
    focus = "rank.out_of_focus" if b.focus_multiplier != 1 else "in focus"
    return (
        f"score {f.score:g} = {b.category_weight:g} rank.category.{f.category}"
        f" × {b.role_multiplier:g} rank.role.{f.role} × {b.confidence:g} confidence"
        f" ({_confidence_source(f)}) × {b.focus_multiplier:g} {focus}"
        f" × {b.boosts:g} boosts ({named}) − {b.depth_penalty:g} rank.depth_penalty × depth"
        + _fusion(b)
    )


def _fusion(b: ScoreBreakdown) -> str:
    """A rewritten query's file order fused rg's with the index's: both ranks, and the ranks
    among the files the text names and those defining its code names when it has them."""
    named = f", named #{b.file_rank_named}" if b.file_rank_named else ""
    defined = f", defines a named name #{b.file_rank_defined}" if b.file_rank_defined else ""
    if not (b.file_rank_rg or b.file_rank_index or named or defined):
        return ""
    rg = f"#{b.file_rank_rg}" if b.file_rank_rg else "none"
    index = f"#{b.file_rank_index}" if b.file_rank_index else "none"
    weights = f" ({b.file_fusion} weights)" if b.file_fusion else ""
    return f"; file rank rg {rg}, index {index}{named}{defined}, fused {b.file_fused:g}{weights}"


_TIER_TUNING = {
    "records": "classify.records_*",
    "node": "classify.node_*",
    "heuristic": "classify.heuristic_*",
    "fallback": "classify.empty_match",
}


def _confidence_source(f: Finding) -> str:
    """Which tuned numbers made the confidence: the classifier tier's, then agreement's."""
    source = _TIER_TUNING.get(f.tier, "classify")
    agreement = f.enrichment.agreement if f.enrichment is not None else None
    if agreement is not None and agreement.status == "full":
        source += " + enrich.agreement_bonus"
    elif agreement is not None and agreement.status == "conflict":
        source += " × enrich.conflict_factor"
    return source
