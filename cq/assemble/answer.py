"""The report's Answer, decided from a finished result: which finding answers, and how.

``plan_report`` is what ``cq.report`` reads besides the result's facts (``ReportPlan``): the
Answer, and the one-line headers the report prints. The Answer is decided once, when the
result is assembled (``decide_answer``); a token budget's cut (``budget.py``) keeps the
findings it names and carries it over to their new places (``kept_answer``), and the rest of
the plan is made again, so it always speaks of the findings shown. ``planned`` sets it with
the same Answer as data (``AnswerRecord``, JSON's ``answer``): the markdown's Answer line and
the JSON's answer are one decision.
"""

from __future__ import annotations

import re

import msgspec

from cq.assemble.sites import cannot_call, message_site, use_sites
from cq.candidates import dotted_parts, patterns_for_query
from cq.model import (
    CALLERS_LISTED,
    Answer,
    AnswerRecord,
    Finding,
    FindingList,
    FunctionList,
    HotFiles,
    KindCounts,
    Pattern,
    Question,
    RelevantFunction,
    ReportPlan,
    SearchResult,
    TargetCounts,
    TopContexts,
)
from cq.parse.one_line import one_line_header, one_line_signature
from cq.rank import Dotted, called_names, dotted_query, is_other_owners_use, last_name

_CALLERS = ("callers", "ambiguous_callers", "no_callers")
# a Rust scope's impl block, as scopes spell it ("impl Date::from_ymd", "impl Display for
# Date::fmt"): the method's name is the type's path (``Date::from_ymd``)
_IMPL = re.compile(r"^impl(?:<[^>]*>)?\s+(?:.+?\s+for\s+)?")


def planned(
    result: SearchResult,
    *,
    compact: bool = False,
    answer: Answer | None = None,
    beyond: tuple[Finding, ...] = (),
    uses: int = 0,
    importers: frozenset[str] = frozenset(),
) -> SearchResult:
    """``result`` with its report plan and its Answer as data, both from one decision
    (``compact``: see ``plan_report``): ``answer`` when given (the Answer decided before a
    budget's cut, ``kept_answer``), else the one its plan already has, else decided now
    (``beyond``: a callers question's calls not shown, ``Tally.calls``; ``uses``: a usage
    question's uses, shown or not, ``Tally.uses``, and ``Tally.importers``)."""
    if answer is None and not isinstance(result.plan, msgspec.UnsetType):
        answer = result.plan.answer
    if answer is None:
        answer = decide_answer(result, beyond, uses, importers)
    plan = plan_report(result, compact=compact, answer=answer)
    return msgspec.structs.replace(result, plan=plan, answer=answer_record(result, plan.answer))


def kept_answer(said: Answer, kept: tuple[int, ...]) -> Answer:
    """The Answer ``said`` of a result whose findings a budget cut to those at ``kept`` (in
    order; they hold every finding the Answer names, ``answer_needs``): the same Answer, its
    findings at their new places."""
    place = {old: new for new, old in enumerate(kept)}
    finding = place.get(said.finding) if said.finding is not None else None
    calls = tuple(place[i] for i in said.calls if i in place)
    return msgspec.structs.replace(said, finding=finding, calls=calls)


def answer_record(result: SearchResult, said: Answer) -> AnswerRecord:
    """The Answer ``said`` as JSON carries it: what it names, where, and whether a later run
    may say otherwise."""
    summary = result.summary
    telemetry = summary.telemetry
    held = telemetry.index
    # Pyrefly's answers order a callers question's or a dotted name's findings: one still
    # pending, or cut by the search's wait, may move them in a later run (cq/semantic/stage.py)
    pending = summary.semantic.pending if summary.semantic is not None else 0
    ordered_by_answers = telemetry.semantic_target is not None or said.kind in _CALLERS
    provisional = (
        (held is not None and bool(held.unused))
        or summary.stats.timed_out
        or (ordered_by_answers and (pending > 0 or bool(telemetry.semantic_failed)))
    )
    total = max(said.total, len(said.calls)) if said.kind in (*_CALLERS, "uses") else 0
    if said.finding is None:
        name = (summary.asked_name or summary.query).strip() if said.kind == "not_found" else None
        return AnswerRecord(kind=said.kind, name=name, provisional=provisional)
    f = result.findings[said.finding]
    return AnswerRecord(
        kind=said.kind,
        name=said.name or (last_name(f.text) if f.category == "definition" else f.text),
        file=f.file,
        line=f.line,
        finding=said.finding,
        calls=said.calls,
        total=total,
        evidence=said.evidence,
        provisional=provisional,
    )


def plan_report(
    result: SearchResult, *, compact: bool = False, answer: Answer | None = None
) -> ReportPlan:
    """The Answer (``answer``, else decided), each shown definition's header on one line
    where the report needs it, each Relevant Function's own name, and the sections that
    would only repeat Top Contexts (``compact``: under a token budget, every list Top
    Contexts covers and the counts)."""
    functions = next((s for s in result.sections if isinstance(s, FunctionList)), None)
    return ReportPlan(
        answer=answer if answer is not None else decide_answer(result),
        one_lines=tuple(_one_line(f) for f in result.findings),
        function_names=tuple(last_name(fn.name) for fn in functions.functions)
        if functions is not None
        else (),
        left_out=_repeated(result, compact=compact),
        told_in_contexts=not compact and _all_in_contexts(result),
    )


def _repeated(result: SearchResult, *, compact: bool) -> tuple[str, ...]:
    """Titles of the sections that print nothing Top Contexts does not. When every finding
    is shown there (a small report): the kind counts and the lists of findings (its
    categories and lines are printed beside each; a two-hit report printed each hit three
    times), and the hot files by count (each group names its file). ``compact`` (a token
    budget): also the lists of findings all shown there (their one-line signatures, resolved
    targets and modules are what goes), the counts and the hot files."""
    covered = _in_contexts(result)
    everything = _all_in_contexts(result)
    out: list[str] = []
    for s in result.sections:
        if isinstance(s, FindingList) and s.finding_indexes:
            if (compact or everything) and set(s.finding_indexes) <= covered:
                out.append(s.title)
        elif isinstance(s, KindCounts) and (compact or everything):
            out.append(s.title)
        elif isinstance(s, HotFiles) and (compact or (everything and s.order == "count")):
            out.append(s.title)  # a question's Relevant Files rank files: kept
    return tuple(out)


def _in_contexts(result: SearchResult) -> set[int]:
    """The findings Top Contexts shows."""
    tops = next((s for s in result.sections if isinstance(s, TopContexts)), None)
    return {i for g in tops.groups for i in g.finding_indexes} if tops is not None else set()


def _all_in_contexts(result: SearchResult) -> bool:
    """Whether Top Contexts shows every finding the search made."""
    shown = len(_in_contexts(result))
    return shown > 0 and shown == len(result.findings) == result.summary.total_findings


def decide_answer(
    result: SearchResult,
    beyond: tuple[Finding, ...] = (),
    uses: int = 0,
    importers: frozenset[str] = frozenset(),
) -> Answer:
    """The primary definition, the callers of a callers question, the code writing a phrase,
    the uses of a usage question, the best hit when nothing defines, or a name not found.
    ``beyond``: a callers question's calls of the name that are not shown (``Tally.calls``),
    counted in its Answer's ``total``: every direct call the search found in the tree;
    ``uses``: a usage question's uses the search found, shown or not (``Tally.uses``), and
    the files importing its dotted name's member from its owner (``Tally.importers``)."""
    findings, summary = result.findings, result.summary
    question = _question(result)
    if not findings:
        if not isinstance(summary.suggestions, msgspec.UnsetType):
            return Answer(kind="not_found")
        rewrite = summary.rewrite
        unnamed = rewrite is not None and rewrite.subject is None and question.refers_back
        return Answer(kind="nothing", unnamed_it=unnamed)
    # a phrase found as written (a rewrite means it was nowhere: the question's Answer then)
    if question.intent == "phrase" and summary.rewrite is None:
        site = message_site(findings)
        if site is not None:
            scope = _IMPL.sub("", findings[site.finding].containing_scope or "")
            return Answer(kind="message", finding=site.finding, verb=site.verb, name=scope)
    if question.intent == "usage":
        sites = use_sites(findings, question, importers)
        if sites:
            # a dotted name is answered as asked (``pyro.sample``): its uses are through its owner
            asked = question.asked_name or ""
            return Answer(
                kind="uses",
                finding=sites[0],
                calls=sites,
                name=asked if dotted_parts(asked) else last_name(asked),
                total=uses,
                verb="" if question.uses == "uses" else question.uses or "",
            )
    if summary.primary is None:
        return Answer(kind="best_hit", finding=0)
    primary = summary.primary
    f = findings[primary]
    target = summary.telemetry.semantic_target
    if target is not None and target.callers_question and target.resolved_to_target:
        # the calls resolved to it; a question naming the owner is answered in its words
        from cq.semantic import resolves_to

        calls = [
            i for i, c in enumerate(findings) if c.category == "callsite" and resolves_to(c, f)
        ]
        if calls:
            owner = dotted_query(_asked_patterns(question))
            more = _calls_beyond(beyond, f, owner)
            return Answer(
                kind="callers",
                finding=primary,
                calls=tuple(calls),
                total=len(calls) + len(more[0]),
                others_beyond=len(more[1]),
                resolved=True,
                name=_owned_name(f, owner) if owner is not None else last_name(f.text),
            )
    if asks_callers_of(result, f):
        owner = dotted_query(_asked_patterns(question))
        return _unresolved_callers(findings, primary, target, owner, beyond)
    first = _answered_function(result, f)
    return Answer(
        kind="definition",
        finding=primary,
        name=last_name(f.text),
        signals=first.signals if first else (),
        evidence=first.evidence if first else (),
        resolved_uses=_resolved_uses(target),
    )


def asks_callers_of(result: SearchResult, f: Finding) -> bool:
    """Whether the query is a callers question about the definition ``f`` (the name it writes,
    or the subject its "it" was read as)."""
    question = _question(result)
    summary = result.summary
    subject = summary.rewrite.subject if summary.rewrite else None
    name = frozenset({last_name(f.text)})
    return f.category == "definition" and bool(called_names(question, name, subject))


def _asked_patterns(question: Question) -> tuple[Pattern, ...]:
    """The patterns a name asked about is searched with (a dotted one: with its last name)."""
    if question.asked_name is None or question.mode != "identifier":
        return ()
    return patterns_for_query(question.asked_name, "identifier")


def _question(result: SearchResult) -> Question:
    """The search's Question: the Answer is decided once, in assemble, where the result
    carries it (a result read back from its JSON carries its ``answer`` instead)."""
    if isinstance(result.question, msgspec.UnsetType):
        raise ValueError("decide the Answer of a SearchResult made by cq.assemble")
    return result.question


def answer_needs(result: SearchResult) -> tuple[int, ...]:
    """The findings a token budget keeps for the planned Answer, in order: the primary
    definition (else the best hit) and, for a callers question about it, the first callsites
    of its name."""
    findings = result.findings
    if not findings or isinstance(result.plan, msgspec.UnsetType):
        return ()
    said = result.plan.answer
    if said.kind == "message" and said.finding is not None:
        return (said.finding,)
    if said.kind == "uses":  # its uses, and the definition it names
        defined = () if result.summary.primary is None else (result.summary.primary,)
        return tuple(sorted({*defined, *said.calls[:CALLERS_LISTED]}))
    primary = result.summary.primary if result.summary.primary is not None else 0
    f = findings[primary]
    if not asks_callers_of(result, f):
        return (primary,)
    name = last_name(f.text)
    calls = [
        i for i, c in enumerate(findings) if c.category == "callsite" and last_name(c.text) == name
    ]
    return tuple(sorted({primary, *calls[:CALLERS_LISTED]}))


def _calls_beyond(
    beyond: tuple[Finding, ...], f: Finding, owner: Dotted | None
) -> tuple[list[Finding], list[Finding]]:
    """The calls of the definition ``f``'s name among those not shown that may reach it, and
    those passing keywords it does not take (another receiver's method of that name; left out
    of the first). Calls of another owner's method (``owner``: the question named one) are
    neither. Matched by name: Pyrefly is asked about the shown findings only."""
    name = last_name(f.text)
    calls = [
        c
        for c in beyond
        if last_name(c.text) == name and not (owner is not None and is_other_owners_use(c, owner))
    ]
    others = [c for c in calls if cannot_call(c, f)]
    return [c for c in calls if not cannot_call(c, f)], others


def _unresolved_callers(
    findings: tuple[Finding, ...],
    primary: int,
    target: TargetCounts | None,
    owner: Dotted | None = None,
    beyond: tuple[Finding, ...] = (),
) -> Answer:
    """A callers question nothing resolved (Rust, ``--no-semantic``): the shown calls of the
    definition's name that resolve nowhere else; several shown definitions of that name make
    them ambiguous; none, the definition saying so. A question naming the owner
    (``FakeBucket.create``) leaves out the calls that cannot reach that owner's method
    (``is_other_owners_use``) and is answered about that owner's definition alone."""
    f = findings[primary]
    name = last_name(f.text)
    calls = tuple(
        i
        for i, c in enumerate(findings)
        if c.category == "callsite"
        and last_name(c.text) == name
        and not _resolved_elsewhere(c, f)
        and not (owner is not None and is_other_owners_use(c, owner))
    )
    others = tuple(i for i in calls if cannot_call(findings[i], f))
    calls = tuple(i for i in calls if i not in others)
    more, more_others = _calls_beyond(beyond, f, owner)
    total, others_beyond = len(calls) + len(more), len(more_others)
    if not calls:
        return Answer(
            kind="no_callers",
            finding=primary,
            name=name,
            total=total,
            resolved_uses=_resolved_uses(target),
        )
    same = sum(1 for d in findings if d.category == "definition" and last_name(d.text) == name)
    if owner is not None:
        same = 1
    if same > 1:  # which of them a call reaches is not known
        return Answer(
            kind="ambiguous_callers",
            finding=primary,
            calls=calls,
            total=total,
            namesakes=same,
            name=name,
        )
    if owner is not None:  # the question named the owner: the Answer names it too
        name = _owned_name(f, owner)
    return Answer(
        kind="callers",
        finding=primary,
        calls=calls,
        total=total,
        name=name,
        others=len(others),
        others_beyond=others_beyond,
    )


def _owned_name(f: Finding, owner: Dotted) -> str:
    """``Owner.member`` (``Owner::member`` in Rust) as the question wrote it."""
    sep = "::" if f.language == "rust" else "."
    return f"{owner.owner}{sep}{owner.member}"


def _resolved_uses(target: TargetCounts | None) -> TargetCounts | None:
    """The uses resolved to the target, when any was resolved (to it or elsewhere)."""
    if target is not None and (target.resolved_to_target or target.resolved_elsewhere):
        return target
    return None


def answering(functions: tuple[RelevantFunction, ...]) -> list[RelevantFunction]:
    """The Relevant Functions in the order they may be the Answer: by their score as the
    Answer (``RelevantFunction.answer_score``: what the question says alone), ties in the
    list's order; one only the embeddings found never answers."""
    scored = [fn for fn in functions if fn.answer_score is not None]
    return sorted(scored, key=lambda fn: -(fn.answer_score or 0.0))


def _answered_function(result: SearchResult, f: Finding) -> RelevantFunction | None:
    """The Relevant Function the Answer was picked from (``answering``) when the
    Answer ``f`` is its definition: what found it (``signals``) and why it answers
    (``evidence``: cq/index/functions.py)."""
    for section in result.sections:
        if isinstance(section, FunctionList) and section.functions:
            first = next(iter(answering(section.functions)), None)
            return first if first and (first.file, first.line) == (f.file, f.line) else None
    return None


def _resolved_elsewhere(call: Finding, definition: Finding) -> bool:
    """The call resolves (Pyrefly, syntax) to another definition than ``definition``."""
    semantic = call.enrichment.semantic if call.enrichment else None
    target = semantic.definition if semantic else None
    return target is not None and (target.file, target.line) != (definition.file, definition.line)


def _one_line(f: Finding) -> str:
    """A definition's header on one line where the report prints one: an unenriched
    definition's own line (e.g. one only the index found), or a signature spanning lines."""
    e = f.enrichment
    if e is None:
        wanted = f.category == "definition" and f.line_text.strip()
        return one_line_header([f.line_text], f.language) if wanted else ""
    if e.signature and "\n" in e.signature:
        return one_line_signature(e.signature, f.language)
    return ""
