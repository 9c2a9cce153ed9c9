"""The search pipeline, top to bottom: the Question, the ladder (rewrite, candidates),
classify, rank, enrich, semantic, the final order (the index's fusion), assemble.

``run_search`` is the one entry point the CLI and the MCP server call. The query is read
once, into a ``Question`` (``cq.rewrite.question``); which rg runs it gets, and the rewrite
and the index's start among them, is ``cq.ladder``'s. Each stage runs once,
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
from cq.candidates import with_context
from cq.classify import classify_all
from cq.enrich import EnrichSettings, cold_start, enrich_shown
from cq.index import IndexFusion, IndexRun
from cq.ladder import Ladder
from cq.model import (
    CODE_CATEGORIES,
    Category,
    Classification,
    FileCount,
    Finding,
    RawMatch,
    RunCounters,
    SearchRequest,
    SearchResult,
    Telemetry,
)
from cq.model.dense import DenseRanker
from cq.model.tuning import Tuning
from cq.parse import Corpus
from cq.progress import Progress, timed
from cq.rank import (
    RankContext,
    called_names,
    dotted_query,
    final_order,
    knowing_importers,
    queried_names,
    score_findings,
    stub_definitions,
    use_question,
)
from cq.rewrite import (
    CallerModel,
    followed_subject,
    question_of,
    remember_primary,
    respelled_as,
    split_dotted,
)
from cq.semantic import begin as begin_semantic
from cq.settings import Settings, settle


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
    must stay inside its root (``cq.confine``); ``settings`` come with the request
    ``cq.settings.settle`` returned, else it is settled here."""
    started = time.perf_counter()
    deadline = time.monotonic() + request.limits.timeout_seconds  # the index's, too
    if settings is None:  # the root confined, the profile read once against it (cq.settings)
        request, settings = settle(request)
    timings: dict[str, float] = {}
    check = cancel.check if cancel is not None else never
    progress = Progress(enabled=request.progress, check=check)
    tuning = settings.tuning
    index: IndexRun | None = None
    try:
        question = question_of(request, tuning.rewrite)  # the query, read once
        # "it" named by --context or --follow-up, read as if written when the question then
        # asks about that name ("where is `post_dump` used?") or it is dotted; otherwise it
        # is the rewrite's subject (cq.rewrite.followed_subject)
        subject = followed_subject(question, settings.scope)
        if subject is not None:
            written = question_of(request, tuning.rewrite, subject)
            if written.asked_name is not None or len(split_dotted(subject)) > 1:
                question = written
        # Every stage reads files through it, rg's lone-CR files included (candidates.lines);
        # the rewriter, the index and the semantic stage share its list of the tree's files.
        corpus = Corpus(
            Path(request.root), tuning.scale.corpus_keep_bytes, remember=request.use_cache
        )
        ladder = Ladder(
            question,
            corpus,
            tuning,
            scope=settings.scope,
            switches=settings.ladder,
            timings=timings,
            on_file=progress.searching,
            on_status=progress.update,
            model=model,
            llm=settings.llm,
            deadline=deadline,
        )
        # as typed, as text, rewritten (cq.ladder); the index's run is held here, closed below
        candidates, climb, index = ladder.climb()
        patterns, rewrite = climb.patterns, climb.rewrite
        if climb.answered is not None:  # a pasted traceback, answered by its message
            question = climb.answered
        respelled = question.asked_name if climb.respelled is not None else None
        if climb.respelled is not None:  # a name no file holds, searched as the tree spells it
            question = respelled_as(question, climb.respelled)
        progress.update(
            f"{len(candidates.matches)} matches in {candidates.stats.matched_files} files"
        )
        # Pyrefly's files come from the corpus (read once, as for all); a long-lived process
        # starts it after ranking (``prepare``). A question whose order depends on Pyrefly's
        # answers waits for them (``orders``).
        orders = question.callers or dotted_query(patterns) is not None
        semantic = begin_semantic(
            settings.scope,
            request.limit,
            candidates.matches,
            corpus,
            settings.semantic,
            orders=orders,
        )  # None: stage off

        with timed(timings, "classify"):
            classified = classify_all(
                corpus, candidates.matches, tuning=tuning, use_cache=request.use_cache, check=check
            )
        progress.update(f"classified {len(classified.classifications)} matches")

        focus = climb.focus
        ranking = RankContext(
            patterns=patterns,
            focus=focus,
            weights=tuning.rank,
            explain=request.explain,
            path_hints=rewrite.plan.path_hints if rewrite else {},
            use_cache=request.use_cache,
            called=called_names(
                question, queried_names(patterns), rewrite.plan.subject if rewrite else None
            ),
            used=use_question(question),
        )
        with timed(timings, "rank"):
            findings = _findings(candidates.matches, classified.classifications)
            # a dotted usage question's bare uses in the files importing it from its owner
            ranking = knowing_importers(ranking, findings)
            candidates = msgspec.structs.replace(candidates, matches=())  # now held as findings
            classified = msgspec.structs.replace(classified, classifications=[])
            # A rewritten question may have the index reorder every finding: keep them all.
            fusing = index is not None
            ranked = score_findings(findings, ranking, corpus, request.limit, keep_rest=fusing)
            del findings

        if semantic is not None:  # a long-lived process: Pyrefly reads them during enrichment
            semantic.prepare(ranked.shown)
        progress.update("enriching the shown findings")
        with timed(timings, "enrich"):
            enriching = EnrichSettings.of(settings, use_store=request.use_cache)
            if index is not None and index.building():  # a first question on a large tree
                enriching = cold_start(enriching)
            enriched = enrich_shown(corpus, ranked.shown, enriching, check)
        if semantic is not None and semantic.active:
            with timed(timings, "semantic"):
                enriched = semantic.apply(enriched, 0)  # every finding here is a shown one

        with timed(timings, "order"):
            refine = (
                None
                if semantic is None
                else partial(semantic.rerank, patterns=patterns, callers=question.callers)
            )
            fuse = None
            if index is not None and rewrite is not None:  # it reorders every finding's file
                dense = _dense(request.root, question.text, tuning)  # optional: cq/embed
                fuse = partial(
                    index.fuse,
                    rewrite.summary,
                    corpus=corpus,
                    focus=focus,
                    dense=dense,
                    explain=request.explain,
                )
            final = final_order(
                ranked, enriched.findings, ranking, request.limit, fuse=fuse, refine=refine
            )
            ordered, tally = final.findings, final.tally
            fused = final.fused or IndexFusion(findings=[])

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
        if climb.missing is not None:  # the name said to be nowhere, as a typed name is
            question = msgspec.structs.replace(question, asked_name=climb.missing)
        facts = SearchFacts(
            echo=settings.echo,
            question=question,
            mode_requested=question.mode_requested or "auto",
            mode=climb.mode,
            mode_chain=climb.mode_chain,
            fallback_applied=climb.fallback_applied,
            patterns=patterns,
            stats=candidates.stats,
            by_language=candidates.by_language,
            focus=focus,
            rewrite=rewrite.summary if rewrite else None,
            timings_ms={k: round(v, 1) for k, v in timings.items()}
            | enriched.timings_ms
            | fused.timings_ms,
            telemetry=enriched.telemetry.plus(
                semantic.telemetry if semantic is not None else Telemetry()
            )
            .plus(Telemetry(classification_fallbacks=classified.reasons or None))
            .plus(fused.telemetry),
            semantic=semantic.summary if semantic is not None else None,
            counters=counters.plus(classified.counters)
            .plus(enriched.counters)
            .plus(semantic.counters if semantic is not None else RunCounters())
            .plus(fused.counters),
            elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
            functions=fused.functions,
            report=tuning.report,
            suggestions=climb.suggestions,
            respelled=respelled,
            stubs=stubs,
        )
        result = assemble_result(ordered, tally, facts)
        if request.listing in ("paths", "counts"):  # -l, -c: every file, best first
            files = tuple(FileCount(f, tally.files[f]) for f in tally.files_in_rank_order)
            result = msgspec.structs.replace(result, files=files)
        if request.follow_up:  # --follow-up: the next question's "it"
            dotted = dotted_query(patterns)
            # else the owner "it" was read with ("where is `Linter.lint_string` tested?",
            # rewritten): the answer of that name keeps it for the next "it"
            parts = dotted.parts if dotted is not None else None
            if parts is None and question.subject is not None:
                parts = tuple(split_dotted(question.subject))
            remember_primary(settings.scope.root, result.findings, result.summary.primary, parts)
        return result
    finally:
        if index is not None:
            index.close()
        progress.close()


def _findings(matches: tuple[RawMatch, ...], classes: list[Classification]) -> list[Finding]:
    return [
        Finding(
            file=m.file,
            line=m.line,
            col=m.col + at,
            end_col=m.col + at + len(text),
            text=text,
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
        for at, text in (_defined_name(m, c),)
    ]


_NAME = re.compile(r"[^\W\d]\w*")


def _defined_name(m: RawMatch, c: Classification) -> tuple[int, str]:
    r"""Where in the match a definition's name is, and the name: a regex match of a whole
    header (``def compute_\w+``) is the definition of its name, resolved there (Pyrefly
    asked at ``def`` answers about the keyword). Any other match: all of it."""
    if c.category != "definition" or not c.containing_scope or _NAME.fullmatch(m.text):
        return 0, m.text
    name = re.split(r"\.|::", c.containing_scope)[-1].strip()
    found = re.search(rf"(?<!\w){re.escape(name)}(?!\w)", m.text) if name else None
    return (found.start(), name) if found else (0, m.text)


_WORD = re.compile(r"\w")


def _category(text: str, category: Category) -> Category:
    """A match of punctuation or an operator alone (``(``, ``->``, ``+=``) names nothing: it
    is a text match wherever its parse node sits, never a definition or a call (in a comment,
    a string or a docstring it stays one)."""
    if text and category in CODE_CATEGORIES and not _WORD.search(text):
        return "text_match"
    return category


def _dense(root: str, text: str, tuning: Tuning) -> DenseRanker | None:
    """The optional dense signal's ranker (``cq/embed``), None unless ``[embed] enabled``:
    nothing of it is imported then."""
    if not tuning.embed.enabled:
        return None
    from cq.embed.dense import dense_ranker

    return dense_ranker(root, text, tuning.embed)


__all__ = ["run_search"]
