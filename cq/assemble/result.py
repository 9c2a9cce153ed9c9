"""A finished search's ``SearchResult``: its summary (the primary definition the Answer
starts from, picked here), its sections and its run, from the shown findings and the facts
the pipeline gathered (``SearchFacts``)."""

from __future__ import annotations

import re
from collections import Counter

import msgspec

from cq.assemble.answer import answering, planned
from cq.assemble.followups import follow_ups
from cq.assemble.sections import (
    IMPORT_KINDS,
    NON_CODE_KINDS,
    finding_list,
    hot_files,
    kind_counts,
    top_contexts,
)
from cq.model import (
    Echo,
    Finding,
    FunctionList,
    HotFiles,
    KindCounts,
    LanguageSummary,
    Omitted,
    Pattern,
    Question,
    RelevantFunction,
    RewriteSummary,
    RunCounters,
    RunInfo,
    SearchResult,
    SearchStats,
    Section,
    SemanticSummary,
    Suggestion,
    Summary,
    Tally,
    Telemetry,
)
from cq.model.tuning import ReportTuning
from cq.rank import (
    Dotted,
    dotted_query,
    is_exact_definition,
    is_target_definition,
    last_name,
    queried_names,
)
from cq.rewrite import name_stems


class SearchFacts(msgspec.Struct, frozen=True, kw_only=True):
    """What the pipeline learned besides the findings."""

    echo: Echo  # what the report repeats of the request (``Settings.echo``)
    question: Question  # its query, understood (``cq.rewrite.question``)
    mode_requested: str
    mode: str
    mode_chain: tuple[str, ...]
    fallback_applied: bool
    patterns: tuple[Pattern, ...]
    stats: SearchStats
    by_language: dict[str, SearchStats]
    focus: str = "all"
    rewrite: RewriteSummary | None = None
    timings_ms: dict[str, float] = {}
    telemetry: Telemetry = msgspec.field(default_factory=Telemetry)
    semantic: SemanticSummary | None = None
    counters: RunCounters = msgspec.field(default_factory=RunCounters)
    elapsed_ms: float = 0.0
    functions: tuple[RelevantFunction, ...] = ()  # rewritten queries with the index (cq/index)
    report: ReportTuning = msgspec.field(default_factory=ReportTuning)
    # an identifier or dotted query that matched nothing: the defined names nearest it
    suggestions: tuple[Suggestion, ...] | None = None
    respelled: str | None = None  # the name asked about that no file holds (``Summary``)
    stubs: frozenset[tuple[str, int]] = frozenset()  # (file, line) of stub definitions


def assemble_result(shown_ranked: list[Finding], tally: Tally, facts: SearchFacts) -> SearchResult:
    """The shown findings in their final order (never reordered), the counts over all
    findings (``tally``), and the run described."""
    echo = facts.echo
    shown = tuple(shown_ranked)
    names = queried_names(facts.patterns)
    # A callers question, or one about a name itself ("where is X defined?"), is answered by
    # the function or name it writes, not by what its words are about.
    question = facts.question
    about = question.about & names
    functions = () if about or question.callers else facts.functions
    primary = _primary(
        shown, about or names, dotted_query(facts.patterns), functions, facts.stubs, question.named
    )
    if primary is not None and not functions and question.intent == "question":
        primary = _named_by_question(shown, question, primary)
    if primary is not None and not functions and question.mentions.frame_functions:
        primary = _innermost_frame(shown, question, primary)
    omitted = Omitted(by_limit=tally.total - len(shown))
    summary = Summary(
        query=question.text,
        root=echo.root,
        mode_requested=facts.mode_requested,
        mode=facts.mode,
        mode_chain=facts.mode_chain,
        fallback_applied=facts.fallback_applied,
        lang_scope=echo.lang,
        language_order=tuple(facts.by_language),
        profile=echo.profile,
        patterns=tuple(f"{p.kind}:{p.text}" for p in facts.patterns),
        stats=facts.stats,
        languages=tuple(
            LanguageSummary(language=lang, stats=stats) for lang, stats in facts.by_language.items()
        ),
        total_findings=tally.total,
        shown_findings=len(shown),
        omitted=omitted,
        primary=primary,
        roles=_role_counts(tally),
        focus=facts.focus,
        rewrite=facts.rewrite,
        asked_name=question.asked_name,
        subject=question.subject,
        respelled=facts.respelled,
        telemetry=facts.telemetry,
        suggestions=msgspec.UNSET if facts.suggestions is None else facts.suggestions,
        semantic=facts.semantic,
    )
    counts = Counter(tally.categories)
    rewritten = facts.rewrite is not None and facts.rewrite.applied
    hot = hot_files(tally, facts.report, by_rank=rewritten)
    functions = FunctionList(functions=facts.functions) if facts.functions else None
    sections = build_sections(
        echo, shown, summary, kind_counts(counts), hot, facts.report, functions
    )
    run = RunInfo(elapsed_ms=facts.elapsed_ms, timings_ms=facts.timings_ms, counters=facts.counters)
    result = SearchResult(
        summary=summary, sections=sections, findings=shown, run=run, question=question
    )
    return planned(result, beyond=tally.calls, uses=tally.uses, importers=tally.importers)


def build_sections(
    echo: Echo,
    shown: tuple[Finding, ...],
    summary: Summary,
    kinds: KindCounts,
    hot: HotFiles,
    report: ReportTuning,
    functions: FunctionList | None = None,
) -> tuple[Section, ...]:
    """The report's sections in reading order (``summary`` says what was left out and why)."""
    counts = Counter(kinds.counts)
    omitted = summary.omitted
    return (
        top_contexts(shown, report),
        *((functions,) if functions is not None else ()),
        finding_list("Definitions", ("definition",), shown, counts),
        finding_list("Imports", IMPORT_KINDS, shown, counts),
        finding_list("Callsites", ("callsite",), shown, counts),
        kinds,
        finding_list("Non-Code Matches", NON_CODE_KINDS, shown, counts, collapsed=True),
        hot,
        follow_ups(
            echo,
            shown,
            summary.primary,
            omitted.by_limit + omitted.by_budget,
            rewritten=bool(summary.rewrite and summary.rewrite.applied),
            tests_exist=summary.roles.get("test", 0) > 0,
            most=report.max_follow_ups,
        ),
    )


def _first_function(
    shown: tuple[Finding, ...], functions: tuple[RelevantFunction, ...]
) -> int | None:
    """A question's answer: the shown definition of the Relevant Function with the best score
    as the Answer that has one (the index's fusion puts that one's definition line among the
    findings).

    The Relevant Functions fuse the index's units with rg's scopes and leave classes out; the
    best of them names a gold function more often than the best-ranked definition of a name
    the rewriter guessed (bench/studies/answer_hits.py; the figures in
    bench/results/2026-11-27-bench-log.md).
    """
    at: dict[tuple[str, int], int] = {}
    for i, f in enumerate(shown):
        if f.category == "definition":
            at.setdefault((f.file, f.line), i)
    ranked = answering(functions)
    return next((at[(fn.file, fn.line)] for fn in ranked if (fn.file, fn.line) in at), None)


def _primary(
    shown: tuple[Finding, ...],
    names: frozenset[str],
    dotted: Dotted | None,
    functions: tuple[RelevantFunction, ...],
    stubs: frozenset[tuple[str, int]] = frozenset(),
    named: bool = False,
) -> int | None:
    """The answer: for a dotted query only its own definition (another owner's ``register``
    is not ``ABCMeta.register``); for a name searched as typed (``named``) only the name's
    own definition found by its pattern, never a unit the index found; for a question with
    Relevant Functions the first of them shown (``_first_function``); else the best-ranked
    definition of the queried name, else of anything. An implementation goes before the
    ``@overload`` and ``...``-bodied declarations of the same name (``stubs``)."""
    definitions = [i for i, f in enumerate(shown) if f.category == "definition"]
    if named or dotted is not None:
        definitions = [i for i in definitions if shown[i].tier != "index"]
    if dotted is not None:
        targets = [i for i in definitions if is_target_definition(shown[i], dotted)]
        return _implemented(shown, targets, stubs)
    first = None if named else _first_function(shown, functions)
    if first is not None:
        return first
    exact = [i for i in definitions if is_exact_definition(shown[i], names)]
    if named:  # with --ignore-case its definition may be written in another case
        folded = {n.casefold() for n in names}
        exact = exact or [i for i in definitions if last_name(shown[i].text).casefold() in folded]
        return _implemented(shown, _most_imported(shown, exact), stubs)
    return _implemented(shown, exact, stubs) if exact else (definitions or [None])[0]


_FROM_IMPORT = re.compile(r"^\s*from\s+(\.*)([\w.]*)\s+import\b")
# a Rust ``use`` line's module path, up to the names it brings in
# (``use crate::parser::features::suggestions;``, ``pub(crate) use crate::error::{Error, Kind};``)
_USE_PATH = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+((?:\w+::)+)")
_RELATIVE = frozenset({"crate", "self", "super"})


def _most_imported(shown: tuple[Finding, ...], definitions: list[int]) -> list[int]:
    """Definitions of one name in several modules (``pyro.contrib.minipyro``'s
    ``apply_stack`` beside ``pyro.poutine.runtime``'s; a model's private copy of a helper;
    clap's ``mod suggestions`` beside a struct's ``suggestions`` field): the one the shown
    imports of the name bring in most often first (``from pkg.mod import name``, or its
    package's re-export; Rust's ``use crate::parser::features::suggestions``), the rest in
    their order. One definition, or imports
    naming none of their modules: as they are."""
    if len(definitions) < 2:
        return definitions
    modules = []
    for f in shown:
        if f.category == "from_import" and f.language == "python":
            m = _FROM_IMPORT.match(f.line_text)
            if m is not None and m.group(2):
                modules.append((last_name(f.text), m.group(2).split(".")))
        elif f.category == "import" and f.language == "rust":
            m = _USE_PATH.match(f.line_text)
            if m is not None:
                parts = [p for p in m.group(1).split("::") if p]
                modules.append((last_name(f.text), parts[1:] if parts[0] in _RELATIVE else parts))
    counts = {
        i: sum(
            1
            for name, parts in modules
            if name == last_name(shown[i].text) and _holds(shown[i].file, parts)
        )
        for i in definitions
    }
    return sorted(definitions, key=lambda i: -counts[i])


def _holds(path: str, parts: list[str]) -> bool:
    """The module ``parts`` (dotted, split) is the file at ``path`` or a package holding it
    (a Rust module: ``a/b.rs`` or ``a/b/mod.rs``)."""
    steps = path.removesuffix(".py").removesuffix(".rs").split("/")
    if steps[-1] in ("__init__", "mod", "lib"):
        steps.pop()
    n = len(parts)
    return any(steps[i : i + n] == parts for i in range(len(steps) - n + 1))


def _named_by_question(shown: tuple[Finding, ...], question: Question, primary: int) -> int:
    """A one-line question answered without Relevant Functions (no index yet): the shown
    definition whose name is the question's own words and no more (``Question.stems``: "how
    are buckets created?" -> ``create_bucket``, over ``_create_underlying_bucket`` ranked
    first by its file), when one is and the best-ranked one is not; else ``primary``. Only an
    exact match: a name all of whose words the question asks (a weaker form, as a Relevant
    Functions signal) lowered the blind questions' Answers (``cq/index/functions.py``)."""
    asked = question.stems
    if not asked:
        return primary

    def named(f: Finding) -> bool:
        return name_stems(last_name(f.text)) == asked

    if named(shown[primary]):
        return primary
    return next(
        (i for i, f in enumerate(shown) if f.category == "definition" and named(f)), primary
    )


def _innermost_frame(shown: tuple[Finding, ...], question: Question, primary: int) -> int:
    """A pasted traceback answered without Relevant Functions (no index yet): the shown
    definition of the innermost frame in the tree (its function, in a file a frame prints),
    as the index's ``frame`` signal puts it first; else ``primary``. The rewrite's names
    are every frame's, and rank alone put an outer frame first (moto's ``key_response``
    over ``get_bucket``, which raised)."""
    paths = tuple(p.replace("\\", "/") for p in question.mentions.frame_paths)
    for name in reversed(question.mentions.frame_functions):
        for i, f in enumerate(shown):
            if f.category != "definition" or last_name(f.text) != name:
                continue
            if not paths or any(p == f.file or p.endswith("/" + f.file) for p in paths):
                return i
    return primary


def _implemented(
    shown: tuple[Finding, ...], candidates: list[int], stubs: frozenset[tuple[str, int]]
) -> int | None:
    """The best-ranked of ``candidates`` that is not a stub, else the best-ranked."""
    real = [i for i in candidates if (shown[i].file, shown[i].line) not in stubs]
    return (real or candidates or [None])[0]


def _role_counts(tally: Tally) -> dict[str, int]:
    counts = tally.roles
    return {role: counts[role] for role in ("src", "test", "doc", "lib") if counts.get(role)}
