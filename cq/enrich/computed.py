"""One shown hit enriched from its file: a pure function of the file, the hit's position and
the settings, wherever it runs (this process, a forked helper, a pool worker:
``cq.enrich.share``), and the key its result is stored under. ``cq.enrich.shown`` runs the
hits in rank order with the store and the budgets around them.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from cq.enrich.budget import enforce_budget
from cq.enrich.nodes import HitSpan
from cq.enrich.python import PythonHit, enrich_python
from cq.enrich.rust import enrich_rust
from cq.enrich.stages import StageRunner
from cq.model import Enrichment, Finding, Language
from cq.model.tuning import EnrichTuning, ParseTuning
from cq.parse import SourceFile
from cq.settings import Settings

# A payload LibCST's hit quota left without stage 4 is stored apart from the full one: each
# search reads exactly the variant its own (deterministic) quota decision asks for.
QUOTA_SUFFIX = ":libcst-quota"


class EnrichSettings(msgspec.Struct, frozen=True, kw_only=True):
    """The tuned budgets and caps, the cross-check switch, and whether to use the store."""

    tuning: EnrichTuning = msgspec.field(default_factory=EnrichTuning)
    caps: ParseTuning = msgspec.field(default_factory=ParseTuning)
    crosscheck: bool = False
    use_store: bool = True

    @classmethod
    def of(cls, settings: Settings, use_store: bool = True) -> EnrichSettings:
        """The search's settings' part for this stage (resolved at its front: the profile's
        groups with their environment overrides, the cross-check switch)."""
        return cls(
            tuning=settings.tuning.enrich,
            caps=settings.tuning.parse,
            crosscheck=settings.crosscheck,
            use_store=use_store,
        )


class Computed(msgspec.Struct, frozen=True, array_like=True):
    """One hit enriched from its file (not the store): what ``book`` keeps of it."""

    index: int
    language: Language
    key: str
    enrichment: Enrichment
    stages_ms: dict[str, float]
    complete: bool


def compute_hit(
    index: int,
    finding: Finding,
    key: str,
    files: ShownFiles,
    settings: EnrichSettings,
    libcst_limit: str | None,
) -> Computed:
    """The hit enriched from its (readable) file: a pure function, run here or in the
    helper."""
    source = files.source(finding)
    assert source is not None
    runner = StageRunner()
    span = files.span(source, finding)
    if finding.language == "python":
        lines = files.lines(source)
        hit = PythonHit(source, span, finding.text, lines, settings.tuning, settings.caps)
        enrichment = enrich_python(
            hit, runner, libcst_limit=libcst_limit, crosscheck=settings.crosscheck
        )
    else:
        enrichment = enrich_rust(source, span, runner, settings.caps.macro_depth)
    enrichment = enforce_budget(enrichment, settings.tuning.max_payload_bytes)
    return Computed(
        index, finding.language, key, enrichment, dict(runner.timings_ms), runner.complete
    )


class ShownFiles:
    """The shown hits' files (the search's corpus's, or those a pool worker was handed),
    with their line tables."""

    def __init__(self, lookup: Callable[[str, Language], SourceFile | None]) -> None:
        self.lookup = lookup
        self.starts: dict[str, list[int]] = {}

    def source(self, finding: Finding) -> SourceFile | None:
        return self.lookup(finding.file, finding.language)

    def lines(self, source: SourceFile) -> list[str]:
        """The file's lines (``SourceFile.lines``), one empty line when it is not UTF-8."""
        return source.lines() or [""]

    def span(self, source: SourceFile, finding: Finding) -> HitSpan:
        if source.path not in self.starts:
            self.starts[source.path] = source.line_starts()
        starts = self.starts[source.path]
        line_start = starts[min(finding.line, len(starts)) - 1]
        # line_text may be clipped around the match, so measure the column in the file's line.
        line_end = source.data.find(b"\n", line_start)
        line = source.data[line_start : line_end if line_end >= 0 else len(source.data)]
        byte_col = len(line.decode("utf-8", errors="replace")[: finding.col].encode("utf-8"))
        byte_len = len(finding.text.encode("utf-8"))
        return HitSpan(
            row=finding.line - 1,
            col=finding.col,
            end_col=finding.end_col,
            byte_start=line_start + byte_col,
            byte_end=line_start + byte_col + byte_len,
        )


def store_key(finding: Finding, files: ShownFiles, settings: EnrichSettings) -> str | None:
    """Content hash, position and the settings that change the payload."""
    source = files.source(finding)
    if source is None:
        return None
    place = f"{finding.line}:{finding.col}:{finding.end_col}"
    return f"{source.digest}:{place}:{int(settings.crosscheck)}:{settings.tuning.max_payload_bytes}"
