"""The score of one finding, with its breakdown; focus decides what counts as out of focus."""

from __future__ import annotations

from cq.model import Focus, RankWeights, Role, ScoreBreakdown


def in_focus(role: Role, focus: Focus) -> bool:
    """Implementation focus demotes tests and docs; tests focus demotes everything else."""
    if focus == "implementation":
        return role in ("src", "lib")
    if focus == "tests":
        return role == "test"
    return True


def role_multiplier(role: Role, focus: Focus, weights: RankWeights) -> float:
    """The role's weight; when tests are the focus, a test is worth what source usually is."""
    if focus == "tests" and role == "test":
        role = "src"
    return weights.role.get(role, 0.8)


def breakdown(
    *,
    category: str,
    role: Role,
    confidence: float,
    focus: Focus,
    depth: int,
    exact_definition: float,
    filename: float,
    terms: float,
    weights: RankWeights,
    cut: bool = False,
) -> ScoreBreakdown:
    """Every factor of the score, rounded so identical inputs print identically (``cut``: the
    hit starts or ends inside a longer name, ``cq.rank.signals.cuts_name``)."""
    name_cut = weights.name_cut if cut else 1.0  # 1.0: a whole name is not cut, no factor
    return ScoreBreakdown(
        category_weight=weights.category.get(category, weights.unknown_category),
        role_multiplier=role_multiplier(role, focus, weights),
        confidence=round(confidence, 4),
        focus_multiplier=1.0 if in_focus(role, focus) else weights.out_of_focus,
        boosts=round(exact_definition * filename * terms * name_cut, 4),
        exact_definition=exact_definition,
        filename=filename,
        terms=round(terms, 4),
        name_cut=name_cut,
        depth_penalty=depth_penalty(depth, weights),
    )


def depth_penalty(depth: int, weights: RankWeights) -> float:
    """What ``depth`` levels of nesting take off a score (at most ``max_depth`` of them)."""
    return round(min(depth, weights.max_depth) * weights.depth_penalty, 4)


def total(b: ScoreBreakdown) -> float:
    """``category x role x confidence x focus x boosts - depth``, never below zero."""
    product = b.category_weight * b.role_multiplier * b.confidence * b.focus_multiplier * b.boosts
    return round(max(product - b.depth_penalty, 0.0), 4)
