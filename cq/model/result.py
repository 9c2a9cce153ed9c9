"""What a search returns: summary, sections and findings, rendered by ``cq.report``."""

from __future__ import annotations

import msgspec

from cq.model.finding import Finding
from cq.model.match import SearchStats

SCHEMA_VERSION = 1


class LanguageSummary(msgspec.Struct, frozen=True, kw_only=True):
    """One language partition: its rg statistics."""

    language: str
    stats: SearchStats


class RewriteSummary(msgspec.Struct, frozen=True, kw_only=True):
    """Which rewrite ran (if any), with what patterns, and why it fell back."""

    applied: bool = False
    trigger: str = "none"  # heuristic | forced | zero_results | none
    rewriter: str = "none"  # e.g. "llm:ollama:qwen2.5:3b" or "offline"
    identifiers: tuple[str, ...] = ()
    literals: tuple[str, ...] = ()
    focus: str = "all"
    fallback_reason: str | None = None
    elapsed_ms: float = 0.0


class RunInfo(msgspec.Struct, frozen=True, kw_only=True):
    """The volatile facts of a run (timings, cache counters, workers).

    The only part of a report allowed to differ between identical runs.
    """

    elapsed_ms: float = 0.0
    timings_ms: dict[str, float] = {}
    counters: dict[str, int] = {}


class Summary(msgspec.Struct, frozen=True, kw_only=True):
    """Everything about the search that is not a finding."""

    query: str
    root: str
    mode_requested: str
    mode: str
    mode_chain: tuple[str, ...]
    fallback_applied: bool
    lang_scope: str
    language_order: tuple[str, ...]
    profile: str
    patterns: tuple[str, ...]
    stats: SearchStats  # the whole rg run; ``languages`` splits it per partition
    languages: tuple[LanguageSummary, ...]
    total_findings: int
    shown_findings: int
    focus: str = "all"
    rewrite: RewriteSummary | None = None
    telemetry: dict[str, dict[str, int]] = {}


class Section(msgspec.Struct, frozen=True, kw_only=True):
    """A titled group of findings (by index into ``findings``) or of short lines."""

    title: str
    finding_indexes: tuple[int, ...] = ()
    lines: tuple[str, ...] = ()
    collapsed: bool = False


class SearchResult(msgspec.Struct, frozen=True, kw_only=True):
    """The whole answer; ``cq.report`` renders it as markdown or JSON."""

    schema_version: int = SCHEMA_VERSION
    command: str = "search"
    summary: Summary
    sections: tuple[Section, ...] = ()
    findings: tuple[Finding, ...] = ()
    run: RunInfo = msgspec.field(default_factory=RunInfo)
