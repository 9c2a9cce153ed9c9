"""Cross-source agreement: do ast-grep, LibCST and tree-sitter say the same about a hit?

Every field two sources both produced (non-empty) is compared after whitespace
normalisation (``facts.squash``); ancestor node kinds are not. ``full``: all
three sources produced fields and none conflict; ``conflict``: some field differs;
``partial``: fewer than three sources had anything to say. ``CQ_PY_ENRICHMENT_CROSSCHECK=1``
turns a conflict into a degrade reason.

How agreement moves confidence (``adjust_confidence``, by ``EnrichTuning``): a hit whose
structure three independent parses confirm is a little surer (+0.05, capped at 1.0); a
conflict means at least one parse misread the code, so the classifier's confidence is scaled
by 0.8; partial leaves it as it is. Ranking has already picked the shown hits, so this moves
their final order and reported confidence, not which hits are shown.
"""

from __future__ import annotations

from cq.enrich.facts import PARSER_SPECIFIC, StructuralFacts, produced, squash
from cq.model import Agreement
from cq.model.tuning import EnrichTuning

_FULL_SOURCES = 3


def build_agreement(sources: dict[str, StructuralFacts | None]) -> Agreement | None:
    """Compare the sources pairwise in the given order; None when no source said anything."""
    fields = {
        name: {k: _normal(v) for k, v in produced(facts).items() if k not in PARSER_SPECIFIC}
        for name, facts in sources.items()
        if facts is not None
    }
    present = tuple(name for name, values in fields.items() if values)
    if not present:
        return None
    conflicts: list[str] = []
    for i, left in enumerate(present):
        for right in present[i + 1 :]:
            for field, value in fields[left].items():
                other = fields[right].get(field)
                if other is not None and other != value:
                    conflicts.append(f"{left} vs {right}: {field}")
    if conflicts:
        status = "conflict"
    elif len(present) >= _FULL_SOURCES:
        status = "full"
    else:
        status = "partial"
    sources = () if status == "full" else present
    return Agreement(status=status, sources=sources, conflicts=tuple(conflicts))


def _normal(value: object) -> object:
    """Compare code text whitespace-insensitively (signatures keep their own layout)."""
    if isinstance(value, str):
        return squash(value)
    if isinstance(value, tuple):
        return tuple(squash(v) if isinstance(v, str) else v for v in value)
    return value


def crosscheck_reason(agreement: Agreement | None) -> str | None:
    """The degrade reason a conflict becomes under ``CQ_PY_ENRICHMENT_CROSSCHECK=1``."""
    if agreement is None or agreement.status != "conflict":
        return None
    return "crosscheck: " + "; ".join(agreement.conflicts)


def adjust_confidence(confidence: float, agreement: Agreement | None, t: EnrichTuning) -> float:
    if agreement is None or agreement.status == "partial":
        return confidence
    if agreement.status == "full":
        return round(min(1.0, confidence + t.agreement_bonus), 4)
    return round(confidence * t.conflict_factor, 4)
