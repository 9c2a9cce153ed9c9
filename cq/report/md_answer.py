"""The report's Answer block: the definition asked about, the callers of a callers question,
or a name not found with the names nearest it."""

from __future__ import annotations

import msgspec

from cq.model import (
    CALLERS_LISTED,
    Finding,
    FunctionList,
    RelevantFunction,
    SearchResult,
)
from cq.rank import called_names, last_name
from cq.report.md_finding import enrichment_facts, line_of, resolvers, scope_of, where_of
from cq.report.md_text import code, fence


def answer(result: SearchResult) -> list[str]:
    """The primary definition with its signature and place, or the best hit if none."""
    findings, summary = result.findings, result.summary
    if not findings and not isinstance(summary.suggestions, msgspec.UnsetType):
        return _not_found(result)
    if not findings:
        return [f"No findings for {code(summary.query.strip()[:80])}."]
    if summary.primary is None:
        best = findings[0]
        head = f"**No definition found.** Best hit: {where_of(best)} {best.category}"
        return [head, *fence([line_of(best)], best.language)]
    f = findings[summary.primary]
    target = summary.telemetry.get("semantic.target", {})
    if target.get("callers_question") and target.get("resolved_to_target"):
        calls = [c for c in findings if c.category == "callsite"][: target["resolved_to_target"]]
        return _callers_answer(f, calls, f"resolved by {resolvers(calls)}")
    subject = summary.rewrite.subject if summary.rewrite else None
    if f.category == "definition" and called_names(
        summary.query, frozenset({last_name(f.text)}), subject
    ):
        return _unresolved_callers_answer(findings, f, target)
    lines = _definition_answer(f, target, "**Answer:**", _signals(result, f))
    why = _first_function(result, f)
    return [*lines, f"Why: {'; '.join(why.evidence)}."] if why and why.evidence else lines


def _not_found(result: SearchResult) -> list[str]:
    """A name no file holds: said so, with the defined names nearest it and where each is."""
    summary = result.summary
    name = (summary.asked_name or summary.query).strip()[:80]
    how = " or as text" if summary.fallback_applied else ""
    where = "the searched scope"
    if summary.stats.timed_out:  # rg stopped early: only what it read is known
        where = "what the search read before its time limit (--timeout)"
    lines = [f"**Not found:** no file in {where} holds {code(name)} as a name{how}."]
    near = summary.suggestions if isinstance(summary.suggestions, tuple) else ()
    if not near:
        return [*lines, "No name the tree defines is near it."]
    lines.append("Did you mean:")
    for s in near:
        lines.append(f"- {code(s.name)} — {s.kind} at {code(f'{s.file}:{s.line}:{s.col}')}")
    return lines


def _signals(result: SearchResult, f: Finding) -> tuple[str, ...]:
    """What found the Answer's function when it is the first Relevant Function (``index``,
    ``rg``: its definition line made from the index's unit, or rg's scope matched inside it
    though not on that line); empty otherwise."""
    first = _first_function(result, f)
    return first.signals if first else ()


def _first_function(result: SearchResult, f: Finding) -> RelevantFunction | None:
    """The first Relevant Function when the Answer ``f`` is its definition (its evidence says
    why it answers: cq/index/functions.py)."""
    for section in result.sections:
        if isinstance(section, FunctionList) and section.functions:
            first = section.functions[0]
            return first if (first.file, first.line) == (f.file, f.line) else None
    return None


def _unresolved_callers_answer(
    findings: tuple[Finding, ...], f: Finding, target: dict[str, int]
) -> list[str]:
    """A callers question nothing resolved (Rust, ``--no-semantic``): the shown calls of the
    definition's name that resolve nowhere else, or, with none, the definition saying so."""
    name = last_name(f.text)
    calls = [
        c
        for c in findings
        if c.category == "callsite" and last_name(c.text) == name and not _resolved_elsewhere(c, f)
    ]
    if calls:
        same = sum(1 for d in findings if d.category == "definition" and last_name(d.text) == name)
        if same > 1:  # which of them a call reaches is not known: say so, name none
            plural = "s" if len(calls) != 1 else ""
            head = (
                f"**Answer:** {len(calls)} shown callsite{plural} named {code(name)}, not "
                f"resolved: {same} shown definitions have that name (the best-ranked at "
                f"{where_of(f)}):"
            )
            return _call_lines(head, calls)
        return _callers_answer(f, calls, "matched by name, not resolved")
    lead = (
        f"**Answer:** no callsite of {code(name)} among the shown findings (it may be "
        "called through a trait or a callback, or from outside the tree);"
    )
    return _definition_answer(f, target, lead)


def _definition_answer(
    f: Finding, target: dict[str, int], lead: str, signals: tuple[str, ...] = ()
) -> list[str]:
    """The definition with its signature, place and what enrichment knows of it (``signals``:
    what found it as the first Relevant Function, ``_signals``)."""
    scope = scope_of(f)
    where = f" in {code(scope)}" if scope else ""
    signature = f.enrichment.signature if f.enrichment else None
    one_line = signature if signature and "\n" not in signature else None
    what = f"{code(f.text)} — {code(one_line)}" if one_line else code(f.text)
    # A definition no pattern matched (the index's unit, tier "index") is a weaker answer: say so
    alone = ""
    if f.tier == "index" and "rg" in signals:
        found = "the index found it, " if "index" in signals else ""
        alone = f"; {found}patterns matched inside it"
    elif f.tier == "index":
        alone = "; the index alone found it, no pattern matched it"
    lines = [f"{lead} {what} defined at {where_of(f)}{where} ({f.role}{alone})"]
    # A header spanning lines is fenced as written; otherwise the definition's own line.
    source = _header_lines(signature, line_of(f)) if signature and not one_line else [line_of(f)]
    lines += fence(source, f.language)
    extra = enrichment_facts(f)
    if extra:
        lines.append(extra)
    if target.get("resolved_to_target") or target.get("resolved_elsewhere"):
        lines.append(_resolved_line(f, target))
    return lines


def _resolved_line(f: Finding, target: dict[str, int]) -> str:
    """How many shown uses resolve to the answer's definition (a dotted query also says of
    how many same-named uses: ``12 of 30``), by whom, and how many elsewhere."""
    by_syntax = target.get("resolved_to_target_by_syntax", 0)
    by_name = target.get("resolved_to_target_by_unique_name", 0)
    weaker = [f"{n} by {how}" for n, how in ((by_syntax, "syntax"), (by_name, "unique name")) if n]
    who = " + ".join(["Pyrefly", *(w.split(" by ", 1)[1] for w in weaker)])
    mine = target.get("resolved_to_target", 0)
    uses = target.get("uses")
    named = f" {code(f.containing_scope)}" if f.containing_scope else ""
    return (
        f"{who}:"
        + (
            f" {mine} of {uses} shown uses of {code(last_name(f.text))}"
            if uses
            else f" {mine} shown uses"
        )
        + f" resolve to {code(f'{f.file}:{f.line}')}{named}"
        + (f" ({', '.join(weaker)})" if weaker else "")
        + f", {target.get('resolved_elsewhere', 0)} to other definitions"
    )


def _resolved_elsewhere(call: Finding, definition: Finding) -> bool:
    """The call resolves (Pyrefly, syntax) to another definition than ``definition``."""
    semantic = call.enrichment.semantic if call.enrichment else None
    target = semantic.definition if semantic else None
    return target is not None and (target.file, target.line) != (definition.file, definition.line)


def _callers_answer(definition: Finding, calls: list[Finding], how: str) -> list[str]:
    """A question about callers: its callsites lead (the ranking put them first; ``how``
    they were tied to the definition), the definition follows on one line."""
    plural = "s" if len(calls) != 1 else ""
    head = (
        f"**Answer:** {len(calls)} shown callsite{plural} of {code(definition.text)}"
        f" (defined at {where_of(definition)}), {how}:"
    )
    return _call_lines(head, calls)


def _call_lines(head: str, calls: list[Finding]) -> list[str]:
    """``head``, the first calls with their scopes, and the first call's line."""
    lines = [head]
    for call in calls[:CALLERS_LISTED]:
        scope = scope_of(call)
        lines.append(f"- {where_of(call)}" + (f" in {code(scope)}" if scope else ""))
    lines += fence([calls[0].line_text], calls[0].language)
    return lines


def _header_lines(signature: str, line_text: str) -> list[str]:
    """A multi-line header's lines, the first one given back the indentation it has in the file."""
    lines = signature.split("\n")
    start = line_text.find(lines[0])
    if start > 0 and not line_text[:start].strip():
        lines[0] = line_text[:start] + lines[0]
    return lines
