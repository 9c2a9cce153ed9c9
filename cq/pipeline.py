"""The search pipeline, top to bottom: rewrite, candidates, classify, rank, enrich, assemble.

``run_search`` is the one entry point the CLI and the MCP server call. Each stage runs once,
forward: the search's ``Corpus`` reads every matched file once for all of them; ranking
scores every finding and picks the shown ones; enrichment adds their detail (which may move
their confidence); the final order is computed once, after that.
"""

from __future__ import annotations

import re
import time
from functools import partial
from pathlib import Path

import msgspec

from cq.assemble import SearchFacts, assemble_result
from cq.cancel import CancelToken, never
from cq.candidates import (
    Candidates,
    collect_candidates,
    detect_mode,
    patterns_for_query,
    with_context,
)
from cq.classify import classify_all
from cq.confine import confine_request
from cq.enrich import EnrichSettings, enrich_shown
from cq.errors import UsageError
from cq.index import IndexFusion, IndexRun
from cq.model import (
    CODE_CATEGORIES,
    Category,
    Classification,
    FileCount,
    Finding,
    Pattern,
    RawMatch,
    RunCounters,
    SearchRequest,
    SearchResult,
    SearchStats,
    Suggestion,
    Tally,
)
from cq.model.tuning import Tuning
from cq.parse import Corpus
from cq.progress import Progress
from cq.rank import (
    RankContext,
    called_names,
    callers_first,
    final_order,
    queried_names,
    score_findings,
    stub_definitions,
    suggest_names,
)
from cq.rewrite import (
    CallerModel,
    Rewrite,
    code_name_asked_about,
    remember_primary,
    rewrite_query,
    rewrite_trigger,
)
from cq.semantic import begin as begin_semantic
from cq.settings import Settings, resolve_settings


def run_search(
    request: SearchRequest,
    *,
    cancel: CancelToken | None = None,
    model: CallerModel | None = None,
    settings: Settings | None = None,
) -> SearchResult:
    """Run one search end to end; a ``cancel``led one raises ``SearchCancelledError`` at the
    next checkpoint (between files, batches, stages and enriched hits); a question's rewrite
    asks the caller's ``model`` when given (an MCP client's). Every path the request names
    must stay inside its root (``cq.confine``)."""
    started = time.perf_counter()
    deadline = time.monotonic() + request.limits.timeout_seconds  # the index's, too
    request = confine_request(request)
    asked = _asked_name(request)
    question, request = request, _searched_as(request, asked)
    timings: dict[str, float] = {}
    check = cancel.check if cancel is not None else never
    progress = Progress(enabled=request.progress, check=check)
    if settings is None:  # the profile parsed once, env and switches on top (cq.settings)
        settings = resolve_settings(request)
    tuning = settings.tuning
    index: IndexRun | None = None
    try:
        mode = request.mode or detect_mode(request.query)
        typed = _typed_line(request.query, mode)
        own = patterns_for_query(typed, mode) if typed is not None else ()  # type: ignore[arg-type]
        mode_chain = [mode]

        # Every stage reads files through it, rg's lone-CR files included (candidates.lines);
        # the rewriter, the index and the semantic stage share its list of the tree's files.
        corpus = Corpus(
            Path(request.root), tuning.scale.corpus_keep_bytes, remember=request.use_cache
        )
        listing = corpus.listing
        rewrite: Rewrite | None = None
        trigger = rewrite_trigger(request, tuning.rewrite)
        if trigger is not None:
            # A question: the index is brought up to date meanwhile (cq.index.evidence).
            index = IndexRun.start(request, progress.update, tuning, None, listing, deadline)
            with _timed(timings, "rewrite"):
                rewrite = rewrite_query(request, trigger, tuning.rewrite, listing, model)
            index = index.kept(rewrite.summary) if index is not None else None
        patterns = own + (rewrite.plan.patterns if rewrite else ())
        searched = _widened(request) if rewrite else request

        with _timed(timings, "candidates"):
            candidates = _collect(searched, patterns, progress.searching, tuning, corpus)
        fallback_applied = False
        retry_literal = mode == "identifier" and request.mode is None and typed is not None
        if retry_literal and not candidates.matches:
            literal = patterns_for_query(typed, "literal")
            mode_chain.append("literal")
            with _timed(timings, "candidates_fallback"):
                retry = collect_candidates(
                    request, literal, progress.searching, tuning.report, corpus
                )
            fallback_applied = True
            if retry.matches:
                candidates, patterns = retry, literal
        # A name no file holds is said to be nowhere, with the defined names nearest it: no
        # rewrite guesses an Answer for it (the index never answers a name).
        suggestions: tuple[Suggestion, ...] | None = None
        if not candidates.matches and mode == "identifier" and typed and rewrite is None:
            with _timed(timings, "suggest"):
                suggestions = suggest_names(typed, request, corpus, tuning.report)
        elif not candidates.matches and rewrite is None and request.rewrite is None:
            with _timed(timings, "rewrite"):
                rewrite = rewrite_query(request, "zero_results", tuning.rewrite, listing, model)
            index = IndexRun.start(
                request, progress.update, tuning, rewrite.summary, listing, deadline
            )
            if rewrite.plan.patterns:
                patterns = own + rewrite.plan.patterns
                with _timed(timings, "candidates_rewritten"):
                    candidates = collect_candidates(
                        _widened(request),
                        patterns,
                        progress.searching,
                        tuning.report,
                        corpus,
                    )
        progress.update(
            f"{len(candidates.matches)} matches in {candidates.stats.matched_files} files"
        )
        # Pyrefly starts meanwhile, opening files the corpus reads for it (once, as for all).
        semantic = begin_semantic(
            request, candidates.matches, corpus, settings.semantic
        )  # None: stage off

        with _timed(timings, "classify"):
            classified = classify_all(
                corpus, candidates.matches, tuning=tuning, use_cache=request.use_cache, check=check
            )
        progress.update(f"classified {len(classified.classifications)} matches")

        focus = request.focus or (rewrite.plan.focus if rewrite else "all")
        ranking = RankContext(
            patterns=patterns,
            focus=focus,
            weights=tuning.rank,
            explain=request.explain,
            path_hints=rewrite.plan.path_hints if rewrite else {},
            use_cache=request.use_cache,
            called=called_names(
                request.query, queried_names(patterns), rewrite.plan.subject if rewrite else None
            ),
        )
        with _timed(timings, "rank"):
            findings = _findings(candidates.matches, classified.classifications)
            candidates = msgspec.structs.replace(candidates, matches=())  # now held as findings
            classified = msgspec.structs.replace(classified, classifications=[])
            # A rewritten question may have the index reorder every finding: keep them all.
            fusing = index is not None
            ranked = score_findings(findings, ranking, corpus, request.limit, keep_rest=fusing)
            del findings

        progress.update("enriching the shown findings")
        with _timed(timings, "enrich"):
            settings = EnrichSettings.from_env(tuning, use_store=request.use_cache)
            enriched = enrich_shown(corpus, ranked.shown, settings, check)
        if semantic is not None and semantic.active:
            with _timed(timings, "semantic"):
                enriched = semantic.apply(enriched, 0)  # every finding here is a shown one

        with _timed(timings, "order"):
            # The semantic refinement (resolved uses of the target first) is the last reorder:
            # after the index fusion, which moves whole files, when there is one.
            refine = None if semantic is None else partial(semantic.rerank, patterns=patterns)
            ordered, tally = final_order(
                ranked, enriched.findings, ranking, refine=None if fusing else refine
            )
            fused = IndexFusion(findings=[])
            if index is not None and rewrite is not None:  # it reorders every finding's file
                dense = _dense(request, tuning)  # embed: the optional dense signal
                fused = index.fuse(rewrite.summary, ordered + ranked.rest, corpus, dense)
                tally = Tally.of(fused.findings)
                ordered = callers_first(fused.findings, ranking)
                ordered = ordered[: request.limit] if request.limit > 0 else ordered
                ordered = refine(ordered) if refine is not None else ordered

        ordered = with_context(
            ordered, corpus, request.before_context, request.after_context, tuning.report
        )
        stubs = stub_definitions(ordered, patterns, corpus)
        corpus.finish()
        read = corpus.stats()
        counters = RunCounters(
            files_read=read.files_read,
            bytes_read=read.bytes_read,
            files_reread=read.reread,
            files_changed=read.changed,
            files_recalled=read.recalled,
            files_racy=read.racy,
        )
        facts = SearchFacts(
            request=question,
            asked_name=asked,
            mode_requested=request.mode or "auto",
            mode=mode_chain[-1] if fallback_applied and ranked.tally.total else mode,
            mode_chain=tuple(mode_chain),
            fallback_applied=fallback_applied,
            patterns=patterns,
            stats=candidates.stats,
            by_language=candidates.by_language,
            focus=focus,
            rewrite=rewrite.summary if rewrite else None,
            timings_ms={k: round(v, 1) for k, v in timings.items()}
            | enriched.timings_ms
            | fused.timings_ms,
            telemetry=enriched.telemetry
            | (semantic.telemetry if semantic is not None else {})
            | _classify_telemetry(classified.reasons)
            | fused.telemetry,
            semantic=semantic.summary if semantic is not None else None,
            counters=counters.plus(classified.counters)
            .plus(enriched.counters)
            .plus(semantic.counters if semantic is not None else RunCounters())
            .plus(fused.counters),
            elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
            functions=fused.functions,
            report=tuning.report,
            suggestions=suggestions,
            stubs=stubs,
            named=mode == "identifier" and typed is not None and not request.rewrite,
        )
        result = assemble_result(ordered, tally, facts)
        if request.listing in ("paths", "counts"):  # -l, -c: every file, best first
            files = tuple(FileCount(f, tally.files[f]) for f in tally.files_in_rank_order)
            result = msgspec.structs.replace(result, files=files)
        remember_primary(request, result.findings, result.summary.primary)
        return result
    finally:
        if index is not None:
            index.close()
        progress.close()


def _collect(
    request: SearchRequest,
    patterns: tuple[Pattern, ...],
    on_file,  # type: ignore[no-untyped-def]
    tuning: Tuning,
    corpus: Corpus,
) -> Candidates:
    """rg over the patterns; no patterns (a bare multi-line text, not rewritten) finds nothing."""
    if not patterns:
        return Candidates(matches=(), stats=SearchStats(), by_language={})
    return collect_candidates(request, patterns, on_file, tuning.report, corpus)


def _widened(request: SearchRequest) -> SearchRequest:
    """A rewritten search's caps: the profile's ``question_*`` ones where higher
    (``Limits``: its patterns are guesses, and a cap keeps the first files in path order)."""
    limits = request.limits
    wider = msgspec.structs.replace(
        limits,
        max_files=max(limits.max_files, limits.question_max_files),
        max_total_matches=max(limits.max_total_matches, limits.question_max_total_matches),
    )
    return msgspec.structs.replace(request, limits=wider)


def _asked_name(request: SearchRequest) -> str | None:
    """The one name a one-line question asks about, written as code ("how does `Arg::new`
    work?"), unless the request says how to search (``--literal``, ``--rewrite``, ...)."""
    if request.mode is not None or request.rewrite is not None:
        return None
    return code_name_asked_about(request.query)


def _searched_as(request: SearchRequest, name: str | None) -> SearchRequest:
    """The request searched for ``name`` as if typed: its definition and uses, ranked as a
    dotted query ranks them, not the rewriter's guesses at the question's other words."""
    return msgspec.structs.replace(request, query=name) if name else request


def _typed_line(query: str, mode: str) -> str | None:
    """The query as typed, for rg, which matches one line at a time: blank lines around it (a
    paste) are dropped; a text of several lines (a pasted issue) is no pattern of its own (the
    rewriter reads it), and a regex of several lines is refused rather than handed to rg."""
    lines = query.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    if len(lines) == 1:
        return lines[0].removesuffix("\r")
    if mode == "regex" and lines:
        raise UsageError(
            "a regex query must be one line: rg matches line by line (the query has "
            f"{len(lines)} lines)"
        )
    return None


def _classify_telemetry(reasons: dict[str, int]) -> dict[str, dict[str, int]]:
    return {"classification_fallbacks": reasons} if reasons else {}


def _findings(matches: tuple[RawMatch, ...], classes: list[Classification]) -> list[Finding]:
    return [
        Finding(
            file=m.file,
            line=m.line,
            col=m.col,
            end_col=m.end_col,
            text=m.text,
            line_text=m.line_text,
            language=m.language,
            category=_category(m.text, c.category),
            confidence=c.confidence,
            tier=c.tier,
            node_kind=c.node_kind,
            containing_scope=c.containing_scope,
            patterns=m.patterns,
            symtable=c.symtable,
            line_window=m.line_window,
        )
        for m, c in zip(matches, classes, strict=True)
    ]


_WORD = re.compile(r"\w")


def _category(text: str, category: Category) -> Category:
    """A match of punctuation or an operator alone (``(``, ``->``, ``+=``) names nothing: it
    is a text match wherever its parse node sits, never a definition or a call (in a comment,
    a string or a docstring it stays one)."""
    if text and category in CODE_CATEGORIES and not _WORD.search(text):
        return "text_match"
    return category


class _timed:
    """Add the wall time of a block to ``timings[name]`` in milliseconds."""

    def __init__(self, timings: dict[str, float], name: str) -> None:
        self.timings, self.name = timings, name

    def __enter__(self) -> None:
        self.t0 = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        elapsed = (time.perf_counter() - self.t0) * 1000
        self.timings[self.name] = self.timings.get(self.name, 0.0) + elapsed


__all__ = ["Candidates", "run_search"]


def _dense(request: SearchRequest, tuning: Tuning):  # type: ignore[no-untyped-def]
    """The optional dense signal's ranker (``cq/embed``), None unless ``[embed] enabled``:
    nothing of it is imported then."""
    if not tuning.embed.enabled:
        return None
    from cq.embed.dense import dense_ranker

    return dense_ranker(request.root, request.query, tuning.embed)
