"""What a search returns: summary, sections and findings, rendered by ``cq.report``."""

from __future__ import annotations

from typing import Literal

import msgspec

from cq.model.finding import Finding
from cq.model.match import SearchStats
from cq.model.question import Question
from cq.model.semantic import SemanticSummary
from cq.model.telemetry import TargetCounts, Telemetry

SCHEMA_VERSION = 2
# Callsites a callers question's Answer lists with the definition they call (the Callsites
# section has them all); a token budget keeps them with the Answer.
CALLERS_LISTED = 3


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
    fallback_reason: str | None = None  # why the LLM was not used (its time: run.timings_ms)
    llm_configured: bool = False  # the user named a model server (else cq tried its default)
    subject: str | None = None  # the name "it" was read as (--context, --follow-up)


class RunCounters(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What one run read, parsed, cached and computed; zero counts are left out of the JSON.

    Each stage fills its own fields and the pipeline adds them up (``plus``).
    """

    files_read: int = 0  # distinct files the search's corpus read, each once
    bytes_read: int = 0
    files_reread: int = 0  # read again after their bytes were dropped (an audit-size search)
    files_changed: int = 0  # found changed on that second read: treated as unreadable
    files_recalled: int = 0  # digests from the digest memory (unchanged stat): not read for it
    files_racy: int = 0  # read too soon after their last change for the memory to keep
    cache_hits: int = 0  # files whose classification (or its records) came from the cache
    verdict_cache_hits: int = 0  # files whose finished classifications came from the cache
    cache_misses: int = 0
    cache_corrupt: int = 0  # unreadable cache entries, rebuilt
    slice_cache_hits: int = 0
    files_parsed: int = 0  # parsed whole
    files_sliced: int = 0
    slices_parsed: int = 0
    slices_failed: int = 0  # files whose slices did not parse: parsed whole instead
    bytes_parsed: int = 0  # what the parses for records read (slices with their stand-ins)
    files_skipped_by_heuristic: int = 0
    node_tier_files: int = 0
    pool_workers: int = 0
    pool_failures: int = 0
    helper_files: int = 0  # analysed by a forked helper of a search that stayed in-process
    symtable_compiled: int = 0
    enrich_store_hits: int = msgspec.field(default=0, name="enrich.store_hits")
    enrich_computed: int = msgspec.field(default=0, name="enrich.computed")
    enrich_helper: int = msgspec.field(default=0, name="enrich.helper")  # by a forked helper
    enrich_standby: int = msgspec.field(default=0, name="enrich.standby")  # ... the standby
    index_files_updated: int = msgspec.field(default=0, name="index.files_updated")
    semantic_cached: int = msgspec.field(default=0, name="semantic.cached")  # from the cache
    semantic_asked: int = msgspec.field(default=0, name="semantic.asked")  # sent to Pyrefly

    def plus(self, other: RunCounters) -> RunCounters:
        """Both runs' counts added up (the pool's size is the larger one)."""
        summed = {
            name: getattr(self, name) + getattr(other, name) for name in self.__struct_fields__
        }
        summed["pool_workers"] = max(self.pool_workers, other.pool_workers)
        return RunCounters(**summed)


class RunInfo(msgspec.Struct, frozen=True, kw_only=True):
    """The volatile facts of a run (timings, cache counters, workers).

    The only part of a report allowed to differ between identical runs.
    """

    elapsed_ms: float = 0.0
    timings_ms: dict[str, float] = {}
    counters: RunCounters = msgspec.field(default_factory=RunCounters)


class FileCount(msgspec.Struct, frozen=True):
    """How many findings one file holds."""

    file: str
    count: int


class ScopeGroup(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Shown findings sharing a containing scope in one file (``scope`` None: module level,
    unless ``unparsed``),
    or, with ``resolves_to``, shown callsites Pyrefly resolved to one definition (``file``
    is then the definition's)."""

    scope: str | None
    file: str
    finding_indexes: tuple[int, ...]
    total: int = 0  # shown findings in this group (``finding_indexes`` may list fewer)
    resolves_to: str | None = None  # "pkg/mod.py:12", the definition the callsites call
    # hits a line alone decided (classification tier "heuristic"): the file was not parsed,
    # so ``scope`` None says nothing of where they sit
    unparsed: bool = False


class FollowUp(msgspec.Struct, frozen=True, kw_only=True):
    """A next command that cq really has; ``argv`` runs as is, ``command`` is shell-quoted;
    ``arguments``: the same search as the MCP tool's arguments (a JSON object), what a report
    for a tool call prints (never in the JSON report, which is the CLI's)."""

    why: str
    argv: tuple[str, ...]
    command: str
    arguments: str | msgspec.UnsetType = msgspec.UNSET


class TopContexts(msgspec.Struct, frozen=True, kw_only=True, tag="top_contexts"):
    """The best scope groups, best first (a group ranks by its best finding)."""

    title: str = "Top Contexts"
    groups: tuple[ScopeGroup, ...] = ()
    total_groups: int = 0


class FindingList(msgspec.Struct, frozen=True, kw_only=True, tag="findings"):
    """Shown findings of some categories (by index into ``findings``), in rank order.

    ``total`` counts all findings of these categories, shown or not.
    """

    title: str
    categories: tuple[str, ...]
    finding_indexes: tuple[int, ...] = ()
    total: int = 0
    collapsed: bool = False


class KindCounts(msgspec.Struct, frozen=True, kw_only=True, tag="counts"):
    """How many findings of each category (all findings, not only the shown ones)."""

    title: str = "Uses by Kind"
    counts: dict[str, int] = {}


class HotFiles(msgspec.Struct, frozen=True, kw_only=True, tag="hot_files"):
    """Files of all findings: most findings first ("Hot Files"), or, for a rewritten query,
    in the order of their best-ranked finding ("Relevant Files": where to look first)."""

    title: str = "Hot Files"
    order: Literal["count", "rank"] = "count"
    files: tuple[FileCount, ...] = ()
    total_files: int = 0


class RelevantFunction(msgspec.Struct, frozen=True, kw_only=True):
    """A code unit a rewritten question is probably about: ``name`` is ``path::Qualified.name``
    (``path::Type::method`` in Rust), ``signals`` says which evidence found it, ``namesakes``
    where its file defines the same name again."""

    name: str
    file: str
    line: int
    kind: str
    score: float
    signature: str = ""
    signals: tuple[str, ...] = ()  # "index" (the repository index), "rg" (a pattern's hits)
    # definition lines of the file's lower-ranked units of the same last name, which the list
    # leaves out (0: a line the file's scan did not find)
    namesakes: tuple[int, ...] = ()
    # why it is here, in words ("a traceback frame names it"), and each signal's value (0-1)
    # behind ``score`` (cq/index/functions.py)
    evidence: tuple[str, ...] = ()
    scores: dict[str, float] = {}
    # its score as the Answer (what the question says alone: cq/index/functions.py); the
    # Answer is the shown definition of the best of them. None: found by the embeddings alone
    answer_score: float | None = None


class FunctionList(msgspec.Struct, frozen=True, kw_only=True, tag="functions"):
    """Relevant Functions: where to start reading, best first (rewritten queries only)."""

    title: str = "Relevant Functions"
    functions: tuple[RelevantFunction, ...] = ()


class FollowUps(msgspec.Struct, frozen=True, kw_only=True, tag="follow_ups"):
    """Suggested next searches."""

    title: str = "Suggested Follow-ups"
    follow_ups: tuple[FollowUp, ...] = ()


Section = TopContexts | FunctionList | FindingList | KindCounts | HotFiles | FollowUps


class Suggestion(msgspec.Struct, frozen=True, kw_only=True):
    """A name the tree defines near a name that matched nothing ("did you mean")."""

    name: str
    # the keyword defining it (def, class, fn, struct, ...); "=" a module constant; "file": a
    # file of the tree named as the query was (``utils.py``), at line 1
    kind: str
    file: str
    line: int  # 1-based, where ``file`` defines it (the first file in path order, src first)
    col: int  # 0-based character column of the name
    # how far it is: edits between the two names read snake/camel-blind (a transposition is
    # one), or 1 + the subwords one has and the other lacks (the same words reordered: 1)
    distance: int


class Omitted(msgspec.Struct, frozen=True, kw_only=True):
    """Findings found but not shown, and why."""

    by_limit: int = 0
    by_budget: int = 0
    token_budget: int = 0


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
    omitted: Omitted = msgspec.field(default_factory=Omitted)
    primary: int | None = None  # index into ``findings`` of the answer: the best definition
    roles: dict[str, int] = {}  # all findings per item role
    focus: str = "all"
    rewrite: RewriteSummary | None = None
    # the one name a question asked about, written as code ("how does `Arg::new` work?"):
    # searched as if it were the query, which ``query`` still holds
    asked_name: str | None = None
    # the name the question asked about when no file holds it and the tree defines one name of
    # the same words in another spelling (``getBucket``: ``get_bucket``), which ``asked_name``
    # then holds and was searched
    respelled: str | None = None
    # the name "it" was read as (--context, --follow-up: the last answer), which
    # ``asked_name`` then holds and was searched, when the question asked about that name or
    # it is dotted; otherwise the rewrite's subject is ``rewrite.subject``
    subject: str | None = None
    telemetry: Telemetry = msgspec.field(default_factory=Telemetry)
    # only when an identifier or dotted query matched nothing: the tree's defined names
    # nearest it, nearest first (empty: none is near)
    suggestions: tuple[Suggestion, ...] | msgspec.UnsetType = msgspec.UNSET
    semantic: SemanticSummary | None = None  # the Pyrefly stage's answers pending, when it ran


AnswerKind = Literal[
    "nothing",  # no finding
    "not_found",  # a name no file holds: the names nearest it (``Summary.suggestions``)
    "best_hit",  # no definition among the findings: the best hit
    "definition",  # the definition asked about (``finding``)
    "callers",  # a callers question: the callsites tied to the definition (``calls``)
    "ambiguous_callers",  # calls of a name several shown definitions have: which, unknown
    "no_callers",  # a callers question whose definition shows no call
    "message",  # a phrase: the code that writes it (raises, logs, prints, formats it)
    "uses",  # a usage question: the name's uses or imports (``calls``), its definition aside
]


class Answer(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What the report's Answer says, as ``cq.assemble`` decided it; ``cq.report`` prints it."""

    kind: AnswerKind
    # index into ``findings``: the definition, the best hit, the phrase's site, the first use
    finding: int | None = None
    calls: tuple[int, ...] = ()  # callers answers: the callsites, in order; uses: the uses
    # message: what the code does with it ("raises", "logs", "prints", "writes"); uses:
    # the uses the question asked for alone ("imports", "raises", "catches", "instances":
    # ``total`` counts only them), "" for every use
    verb: str = ""
    # uses: how many the whole search found, shown or not; callers: every call of the name
    # the search found (shown or not, the tree's direct calls) less those on other receivers
    total: int = 0
    # callers: shown calls of the name passing keywords the definition does not take
    # (another receiver's method of that name), left out of ``calls``
    others: int = 0
    others_beyond: int = 0  # callers: the same among the calls not shown
    # nothing: the question says "it" and nothing said what it is (``--context``, ``--follow-up``)
    unnamed_it: bool = False
    resolved: bool = False  # callers: tied to the definition by a resolver, not by name alone
    namesakes: int = 0  # ambiguous_callers: the shown definitions of that name
    name: str = ""  # callers answers: the definition's own name
    # definition: what found the Relevant Function it answers with (``RelevantFunction.signals``)
    signals: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()  # definition: why it answers (``RelevantFunction.evidence``)
    # definition answers: the shown uses resolved to it, when any use was resolved
    resolved_uses: TargetCounts | None = None


class AnswerRecord(msgspec.Struct, frozen=True, kw_only=True):
    """The report's Answer as data: JSON's ``answer`` and MCP's structured content carry what
    the markdown's Answer line says, made from the same ``Answer`` (``cq.assemble.answer``),
    so no reader re-derives it from ``summary.primary`` and the sections."""

    kind: AnswerKind
    # the definition's name (callers answers: the called function's), a best hit's matched
    # text, or the name not found; None: nothing was found
    name: str | None = None
    file: str | None = None  # where the definition (or best hit) is; None: no finding
    line: int | None = None
    finding: int | None = None  # index into ``findings``
    calls: tuple[int, ...] = ()  # callers answers: the callsites, as indexes into ``findings``
    # callers and uses answers: how many calls (uses) the search found in the tree, shown or
    # not (``calls`` lists the shown ones); calls on another receiver left out; 0 otherwise
    total: int = 0
    evidence: tuple[str, ...] = ()  # why it answers (its Relevant Function's evidence)
    # a later run of the same command may answer otherwise: the search went without the index
    # it meant to consult (``summary.telemetry.index.unused``), rg stopped at --timeout, or a
    # callers answer still waits for Pyrefly's answers (``summary.semantic.pending``)
    provisional: bool = False


class ReportPlan(msgspec.Struct, frozen=True, kw_only=True):
    """What the report says beyond the JSON's facts, decided by ``cq.assemble``. Not written
    into the JSON, which carries ``summary.primary`` and the sections it is made from."""

    answer: Answer
    # per finding: a definition's header on one line where the report prints one ("": none)
    one_lines: tuple[str, ...] = ()
    # per Relevant Function: its own name (the last of ``RelevantFunction.name``'s parts)
    function_names: tuple[str, ...] = ()
    # titles of the sections the markdown leaves out: they would print again what Top
    # Contexts shows (the kind counts of findings all shown there); under a token budget
    # the lists it covers, the counts and the hot files go before a finding does
    left_out: tuple[str, ...] = ()
    # every finding is shown in Top Contexts and the lists of findings are left out: its
    # bullets say what the lists said that the lines do not (where a use resolves, a
    # definition's references, a finding's role)
    told_in_contexts: bool = False


class SearchResult(msgspec.Struct, frozen=True, kw_only=True):
    """The whole answer; ``cq.report`` renders it as markdown or JSON."""

    schema_version: int = SCHEMA_VERSION
    command: str = "search"
    summary: Summary
    answer: AnswerRecord | None = None  # the Answer, as the report's Answer line says it
    sections: tuple[Section, ...] = ()
    findings: tuple[Finding, ...] = ()
    run: RunInfo = msgspec.field(default_factory=RunInfo)
    # Every file with findings and how many, in the order of its best finding: asked for by
    # ``-l`` and ``-c`` (``SearchRequest.listing``), else left out.
    files: tuple[FileCount, ...] | msgspec.UnsetType = msgspec.UNSET
    plan: ReportPlan | msgspec.UnsetType = msgspec.UNSET  # the report's, never in the JSON
    # the query as understood (``cq.rewrite.question``): what assemble and its budget decide
    # the Answer from, never re-reading the text; never in the JSON
    question: Question | msgspec.UnsetType = msgspec.UNSET
