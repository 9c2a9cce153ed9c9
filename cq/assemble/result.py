"""Build the summary and sections of a finished search."""

from __future__ import annotations

from collections import Counter

import msgspec

from cq.model import (
    Finding,
    LanguageSummary,
    RewriteSummary,
    RunInfo,
    SearchRequest,
    SearchResult,
    SearchStats,
    Section,
    Summary,
)


class SearchFacts(msgspec.Struct, frozen=True, kw_only=True):
    """What the pipeline learned besides the findings."""

    request: SearchRequest
    mode_requested: str
    mode: str
    mode_chain: tuple[str, ...]
    fallback_applied: bool
    patterns: tuple[str, ...]
    stats: SearchStats
    by_language: dict[str, SearchStats]
    focus: str = "all"
    rewrite: RewriteSummary | None = None
    timings_ms: dict[str, float] = {}
    telemetry: dict[str, dict[str, int]] = {}
    counters: dict[str, int] = {}
    elapsed_ms: float = 0.0


def assemble_result(ranked: list[Finding], facts: SearchFacts) -> SearchResult:
    """Cut to the request's limit and describe the run."""
    limit = facts.request.limit
    shown = ranked if limit <= 0 else ranked[:limit]
    summary = Summary(
        query=facts.request.query,
        root=facts.request.root,
        mode_requested=facts.mode_requested,
        mode=facts.mode,
        mode_chain=facts.mode_chain,
        fallback_applied=facts.fallback_applied,
        lang_scope=facts.request.lang,
        language_order=tuple(facts.by_language),
        profile=facts.request.profile,
        patterns=facts.patterns,
        stats=facts.stats,
        languages=tuple(
            LanguageSummary(language=lang, stats=stats) for lang, stats in facts.by_language.items()
        ),
        total_findings=len(ranked),
        shown_findings=len(shown),
        focus=facts.focus,
        rewrite=facts.rewrite,
        telemetry=facts.telemetry,
    )
    run = RunInfo(elapsed_ms=facts.elapsed_ms, timings_ms=facts.timings_ms, counters=facts.counters)
    return SearchResult(summary=summary, sections=_sections(shown), findings=tuple(shown), run=run)


def _sections(shown: list[Finding]) -> tuple[Section, ...]:
    by_file = Counter(f.file for f in shown)
    hot = tuple(f"{path} ({count})" for path, count in sorted(by_file.items(), key=_hot_key)[:10])
    return (
        Section(title="Matches", finding_indexes=tuple(range(len(shown)))),
        Section(title="Hot Files", lines=hot),
    )


def _hot_key(item: tuple[str, int]) -> tuple[int, str]:
    return (-item[1], item[0])
