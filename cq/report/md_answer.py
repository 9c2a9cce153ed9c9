"""The report's Answer block, as ``cq.assemble`` decided it (``Answer``): the definition asked
about, the callers of a callers question, or a name not found with the names nearest it."""

from __future__ import annotations

from msgspec import UnsetType

from cq.model import (
    CALLERS_LISTED,
    Answer,
    Finding,
    SearchResult,
    TargetCounts,
)
from cq.report.md_finding import enrichment_facts, line_of, resolvers, scope_of, where_of
from cq.report.md_text import code, fence, option, option_name


def answer(result: SearchResult, said: Answer, *, tool: bool = False) -> list[str]:
    """The Answer's lines (``tool``: options named as the MCP tool's arguments)."""
    findings, summary = result.findings, result.summary
    if said.kind == "not_found":
        return _not_found(result, tool)
    if said.kind == "nothing" or said.finding is None:
        lines = [f"No findings for {code(summary.query.strip()[:80])}."]
        question = result.question
        if said.unnamed_it and not isinstance(question, UnsetType) and question.context:
            given = code(option_name("--context", tool=tool))
            lines.append(  # given, but it names nothing: asking for it again would not help
                f"Nothing said what `it` is: the {given} given names no code; write the name "
                "there as the code spells it."
            )
        elif said.unnamed_it:
            context = code(option("--context", "TEXT", tool=tool))
            follow = code(option("--follow-up", tool=tool))
            lines.append(
                f"Nothing said what `it` is: give it with {context}, or search its "
                f"name with {follow} first, then ask again with {follow}."
            )
        return lines
    f = findings[said.finding]
    calls = [findings[i] for i in said.calls]
    if said.kind == "best_hit":
        head = f"**No definition found.** Best hit: {where_of(f)} {f.category}"
        return [head, *fence([line_of(f)], f.language)]
    if said.kind == "message":
        who = code(said.name) if said.name else "code whose scope is not known"
        head = f"**Answer:** {who} {said.verb} it, at {where_of(f)} ({f.role})"
        return [head, *fence([line_of(f)], f.language)]
    if said.kind == "uses":
        return _uses_answer(findings, said, summary.primary)
    if said.kind == "callers":
        how = "matched by name, not resolved"
        if said.resolved:
            how = f"resolved by {resolvers(calls)}"
        if said.others:
            plural = "s pass" if said.others != 1 else " passes"
            how += (
                f"; {said.others} other shown call{plural} keywords it does not take "
                "(another receiver's method of that name)"
            )
        if said.others_beyond:
            plural = ("s", "pass") if said.others_beyond != 1 else ("", "passes")
            how += (
                f"; {said.others_beyond} call{plural[0]} beyond the shown ones {plural[1]} "
                "keywords it does not take (another receiver's method of that name)"
            )
        owned = said.name if said.name and said.name != f.text else ""  # its owner asked
        return _callers_answer(f, calls, how, owned, said.total)
    if said.kind == "ambiguous_callers":
        plural = "s" if len(calls) != 1 else ""
        head = (
            f"**Answer:** {len(calls)} shown callsite{plural}{_in_all(said.total, calls)} "
            f"named {code(said.name)}, not "
            f"resolved: {said.namesakes} shown definitions have that name (the best-ranked at "
            f"{where_of(f)}):"
        )
        return _call_lines(head, calls)
    if said.kind == "no_callers":
        lead = (
            f"**Answer:** no callsite of {code(said.name)} among the shown findings (it may be "
            "called through a trait or a callback, or from outside the tree);"
        )
        if said.total:
            plural = "s" if said.total != 1 else ""
            lead = (
                f"**Answer:** no callsite of {code(said.name)} among the shown findings, but "
                f"{said.total} call{plural} of that name beyond them (raise --limit to see "
                "them);"
            )
        return _definition_answer(f, said, lead)
    lines = _definition_answer(f, said, "**Answer:**")
    return [*lines, f"Why: {'; '.join(said.evidence)}."] if said.evidence else lines


# a usage Answer's count in words, by the uses the question asked for (``Answer.verb``)
_USE_WORDS = {
    "imports": ("import", "imports"),
    "raises": ("raise", "raises"),
    "catches": ("handler", "handlers"),
    "instances": ("instantiation", "instantiations"),
    "implements": ("implementation", "implementations"),
    "subclasses": ("subclass", "subclasses"),
}


def _uses_answer(findings: tuple[Finding, ...], said: Answer, primary: int | None) -> list[str]:
    """A usage question: how many uses (imports) the search found, the first ones shown with
    their scopes, and where the name is defined when that is shown."""
    uses = [findings[i] for i in said.calls]
    total = max(said.total, len(uses))
    # the count is of the uses the question asked for ("where is X raised?": raises), of
    # imports when every use counted is shown and is one ("where is X used?" counts calls
    # and references too)
    imports = all(u.category in ("import", "from_import") for u in uses) and total == len(uses)
    one, many = _USE_WORDS.get(said.verb or ("imports" if imports else ""), ("use", "uses"))
    shown = f", {len(uses)} shown" if total > len(uses) else ""
    defined = ""
    if primary is not None:
        defined = f" (defined at {where_of(findings[primary])})"
    head = (
        f"**Answer:** {total} {many if total != 1 else one} of {code(said.name)}{defined}{shown}:"
    )
    return _call_lines(head, uses)


def _not_found(result: SearchResult, tool: bool) -> list[str]:
    """A name no file holds: said so, with the defined names nearest it and where each is."""
    summary = result.summary
    name = (summary.asked_name or summary.query).strip()[:80]
    how = "as a name or as text" if summary.fallback_applied else "as a name"
    rewritten = summary.rewrite is not None and summary.rewrite.applied
    if summary.mode == "literal" and not rewritten:  # a file name, a line cited: rg read text
        how = "as text"
    where = "the searched scope"
    if summary.stats.timed_out:  # rg stopped early: only what it read is known
        where = "what the search read before its time limit" + ("" if tool else " (--timeout)")
    lines = [f"**Not found:** no file in {where} holds {code(name)} {how}."]
    near = summary.suggestions if isinstance(summary.suggestions, tuple) else ()
    if not near:  # the names nearest are of the scope searched (--in, --include), not the tree
        return [*lines, "No name defined in the searched scope is near it."]
    lines.append("Did you mean:")
    for s in near:
        if s.kind == "file":  # a file, not a name: where to search inside it
            cited = code(f"{s.file}:{s.line}") if s.line > 1 else code(s.file)
            inside = code(option("--in", s.file, tool=tool))
            lines.append(f"- {cited} — a file of the tree ({inside} searches it)")
        else:
            lines.append(f"- {code(s.name)} — {s.kind} at {code(f'{s.file}:{s.line}:{s.col}')}")
    return lines


def _definition_answer(f: Finding, said: Answer, lead: str) -> list[str]:
    """The definition with its signature, place and what enrichment knows of it (``signals``:
    what found it as the Relevant Function it answers with)."""
    scope = scope_of(f)
    where = f" in {code(scope)}" if scope else ""
    signature = f.enrichment.signature if f.enrichment else None
    if signature == f.text:  # the name alone (an enum variant ``Mon``) says nothing more
        signature = None
    one_line = signature if signature and "\n" not in signature else None
    what = f"{code(f.text)} — {code(one_line)}" if one_line else code(f.text)
    # A definition no pattern matched (the index's unit, tier "index") is a weaker answer: say so
    alone = ""
    if f.tier == "index" and "rg" in said.signals:
        found = "the index found it, " if "index" in said.signals else ""
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
    if said.resolved_uses is not None:
        lines.append(_resolved_line(f, said.name, said.resolved_uses))
    return lines


def _resolved_line(f: Finding, name: str, target: TargetCounts) -> str:
    """How many shown uses resolve to the answer's definition (a dotted query also says of
    how many same-named uses: ``12 of 30``), by whom, and how many elsewhere."""
    by_syntax = target.resolved_to_target_by_syntax
    by_name = target.resolved_to_target_by_unique_name
    weaker = [f"{n} by {how}" for n, how in ((by_syntax, "syntax"), (by_name, "unique name")) if n]
    who = " + ".join(["Pyrefly", *(w.split(" by ", 1)[1] for w in weaker)])
    mine = target.resolved_to_target
    uses = target.uses
    named = f" {code(f.containing_scope)}" if f.containing_scope else ""
    return (
        f"{who}:"
        + (f" {mine} of {uses} shown uses of {code(name)}" if uses else f" {mine} shown uses")
        + f" resolve to {code(f'{f.file}:{f.line}')}{named}"
        + (f" ({', '.join(weaker)})" if weaker else "")
        + f", {target.resolved_elsewhere} to other definitions"
    )


def _callers_answer(
    definition: Finding, calls: list[Finding], how: str, owned: str = "", total: int = 0
) -> list[str]:
    """A question about callers: its callsites lead (the ranking put them first; ``how``
    they were tied to the definition), the definition follows on one line; ``total``: the
    calls the search found in the tree, shown or not."""
    plural = "s" if len(calls) != 1 else ""
    named = owned or definition.text
    counted = f"{len(calls)} shown callsite{plural} of {code(named)}"
    if total > len(calls):  # the search found more than it shows
        counted = f"{total} callsites of {code(named)} in the tree, {len(calls)} shown"
    head = f"**Answer:** {counted} (defined at {where_of(definition)}), {how}:"
    return _call_lines(head, calls)


def _in_all(total: int, calls: list[Finding]) -> str:
    """The words " of N in the tree" when the search found more calls than it shows."""
    return f" of {total} in the tree" if total > len(calls) else ""


def _call_lines(head: str, calls: list[Finding]) -> list[str]:
    """``head``, the first calls with their scopes, and the first call's line."""
    lines = [head]
    for call in calls[:CALLERS_LISTED]:
        scope = scope_of(call)
        lines.append(f"- {where_of(call)}" + (f" in {code(scope)}" if scope else ""))
    # A count above the list must not read as the list: the rest are among the findings below.
    rest = len(calls) - CALLERS_LISTED
    if rest > 0:
        lines.append(f"- and {rest} more among the findings below")
    lines += fence([calls[0].line_text], calls[0].language)
    return lines


def _header_lines(signature: str, line_text: str) -> list[str]:
    """A multi-line header's lines, the first one given back the indentation it has in the file."""
    lines = signature.split("\n")
    start = line_text.find(lines[0])
    if start > 0 and not line_text[:start].strip():
        lines[0] = line_text[:start] + lines[0]
    return lines
