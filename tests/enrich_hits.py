"""Enrichment test helpers: findings located by a marker in fixture text, enriched in-process."""

from __future__ import annotations

import re
from pathlib import Path

from cq.enrich import EnrichSettings, enrich_shown
from cq.model import Enrichment, Finding, Language
from cq.model.tuning import EnrichTuning
from cq.parse import Corpus


def finding_at(root: Path, rel: str, word: str, line_has: str, nth: int = 0) -> Finding:
    """The ``nth`` word-bounded ``word`` on the first line of ``rel`` containing ``line_has``."""
    text = (root / rel).read_text(encoding="utf-8")
    language: Language = "rust" if rel.endswith(".rs") else "python"
    for number, line in enumerate(text.split("\n"), start=1):
        if line_has in line:
            match = list(re.finditer(rf"\b{re.escape(word)}\b", line))[nth]
            return Finding(
                file=rel,
                line=number,
                col=match.start(),
                end_col=match.end(),
                text=word,
                line_text=line,
                language=language,
                category="text_match",
                confidence=0.5,
            )
    raise AssertionError(f"no line with {line_has!r} in {rel}")


def enrich(root: Path, *findings: Finding, **tuned: object) -> list[Enrichment]:
    """Enrich ``findings`` (all shown) without the persistent store; ``tuned`` overrides
    fields of ``EnrichTuning``."""
    options = EnrichSettings(use_store=False, tuning=EnrichTuning(**tuned))  # type: ignore[arg-type]
    outcome = enrich_shown(Corpus(root), list(findings), options)
    return [f.enrichment for f in outcome.findings if f.enrichment is not None]


def enrich_one(root: Path, rel: str, word: str, line_has: str, nth: int = 0) -> Enrichment:
    (enrichment,) = enrich(root, finding_at(root, rel, word, line_has, nth))
    return enrichment
