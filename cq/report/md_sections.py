"""Markdown blocks of the report, one function per section (each returns its lines)."""

from __future__ import annotations

import re

import msgspec

from cq.model import (
    CALLERS_LISTED,
    Finding,
    FindingList,
    FollowUps,
    FunctionList,
    HotFiles,
    KindCounts,
    RelevantFunction,
    ScoreBreakdown,
    SearchResult,
    TopContexts,
)
from cq.rank import called_names, last_name
from cq.report.md_scope import dropped_by_scope
from cq.report.md_text import code, fence, shown_line

_SHORT_KIND = {"docstring_match": "docstring", "comment_match": "comment", "string_match": "string"}
_LISTED = frozenset(
    {"definition", "callsite", "import", "from_import", *_SHORT_KIND}
)  # kinds with a section of their own


def answer(result: SearchResult) -> list[str]:
    """The primary definition with its signature and place, or the best hit if none."""
    findings, summary = result.findings, result.summary
    if not findings and not isinstance(summary.suggestions, msgspec.UnsetType):
        return _not_found(result)
    if not findings:
        return [f"No findings for {code(summary.query.strip()[:80])}."]
    if summary.primary is None:
        best = findings[0]
        head = f"**No definition found.** Best hit: {_where(best)} {best.category}"
        return [head, *fence([_line(best)], best.language)]
    f = findings[summary.primary]
    target = summary.telemetry.get("semantic.target", {})
    if target.get("callers_question") and target.get("resolved_to_target"):
        calls = [c for c in findings if c.category == "callsite"][: target["resolved_to_target"]]
        return _callers_answer(f, calls, f"resolved by {_resolvers(calls)}")
    subject = summary.rewrite.subject if summary.rewrite else None
    if f.category == "definition" and called_names(
        summary.query, frozenset({last_name(f.text)}), subject
    ):
        return _unresolved_callers_answer(findings, f, target)
    return _definition_answer(f, target, "**Answer:**", _signals(result, f))


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
    for section in result.sections:
        if isinstance(section, FunctionList) and section.functions:
            first = section.functions[0]
            return first.signals if (first.file, first.line) == (f.file, f.line) else ()
    return ()


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
                f"{_where(f)}):"
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
    scope = _scope(f)
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
    lines = [f"{lead} {what} defined at {_where(f)}{where} ({f.role}{alone})"]
    # A header spanning lines is fenced as written; otherwise the definition's own line.
    source = _header_lines(signature, _line(f)) if signature and not one_line else [_line(f)]
    lines += fence(source, f.language)
    extra = _enrichment_facts(f)
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
        f" (defined at {_where(definition)}), {how}:"
    )
    return _call_lines(head, calls)


def _call_lines(head: str, calls: list[Finding]) -> list[str]:
    """``head``, the first calls with their scopes, and the first call's line."""
    lines = [head]
    for call in calls[:CALLERS_LISTED]:
        scope = _scope(call)
        lines.append(f"- {_where(call)}" + (f" in {code(scope)}" if scope else ""))
    lines += fence([calls[0].line_text], calls[0].language)
    return lines


_RESOLVERS = {"pyrefly": "Pyrefly", "syntax": "syntax", "unique-name": "unique name"}


def _resolvers(findings: list[Finding]) -> str:
    """Who resolved these hits' definitions, joined by `` + ``: ``Pyrefly``, ``syntax`` (cq's
    own reading of the source, ``via: syntax``), ``unique name`` (the root's one method of
    that name, ``via: unique-name``)."""
    via = {
        f.enrichment.semantic.definition.via
        for f in findings
        if f.enrichment and f.enrichment.semantic and f.enrichment.semantic.definition
    }
    named = [label for key, label in _RESOLVERS.items() if key in via]
    return " + ".join(named) or "Pyrefly"


def _header_lines(signature: str, line_text: str) -> list[str]:
    """A multi-line header's lines, the first one given back the indentation it has in the file."""
    lines = signature.split("\n")
    start = line_text.find(lines[0])
    if start > 0 and not line_text[:start].strip():
        lines[0] = line_text[:start] + lines[0]
    return lines


def overview(result: SearchResult, *, verbose: bool = False) -> list[str]:
    """One or two lines: counts, what was left out, mode, languages, focus, roles, rewrite;
    ``verbose`` (``--explain``): the stages' telemetry too."""
    s = result.summary
    shown = f"{s.total_findings} findings, {s.shown_findings} shown"
    left = []
    if s.omitted.by_limit:
        left.append(f"{s.omitted.by_limit} beyond --limit")
    if s.omitted.by_budget:
        left.append(f"{s.omitted.by_budget} dropped to fit --max-tokens {s.omitted.token_budget}")
    if left:
        shown += f" ({'; '.join(left)})"
    langs = ", ".join(
        f"{ls.language} {ls.stats.total_matches} in {ls.stats.matched_files} files"
        for ls in s.languages
        if ls.stats.total_matches
    )
    mode = " → ".join(s.mode_chain)
    roles = ", ".join(f"{role} {n}" for role, n in s.roles.items())
    scope = "" if s.lang_scope == "auto" else f" (--lang {s.lang_scope})"
    parts = [shown, f"mode {mode}", (langs or "no files matched") + scope, f"focus {s.focus}"]
    if roles:
        parts.append(f"roles {roles}")
    if s.stats.caps_hit != "none" or s.stats.timed_out:
        parts.append(f"caps hit {s.stats.caps_hit}" + (", timed out" if s.stats.timed_out else ""))
    lines = [" · ".join(parts)]
    if s.stats.dropped_by_scope:
        lines.append(dropped_by_scope(s.stats.dropped_by_scope, s.lang_scope))
    if verbose and s.telemetry:
        lines.append(
            "telemetry: "
            + "; ".join(
                f"{name} " + ", ".join(f"{key} {n}" for key, n in counts.items())
                for name, counts in s.telemetry.items()
            )
        )
    if s.semantic is not None and s.semantic.pending:
        lines.append(_pending(s.semantic.pending, s.semantic.asking))
    if s.telemetry.get("index", {}).get("stale"):
        lines.append(
            "index: stale, another cq process holds its writer; answered from the index as "
            "last committed (files changed since are missing or out of date)"
        )
    if s.asked_name:
        lines.append(f"asked about {code(s.asked_name)}: searched as that name")
    if s.rewrite and s.rewrite.applied:
        terms = ", ".join(code(t) for t in (*s.rewrite.identifiers, *s.rewrite.literals))
        lines.append(f"rewritten by {s.rewrite.rewriter} ({s.rewrite.trigger}): {terms}")
        reason = s.rewrite.fallback_reason
        # cq's default model server not answering is no news; one the user named is
        if reason and s.rewrite.llm_configured and reason != "llm disabled by config":
            lines.append(f"offline fallback: {reason}")
    return lines


def _pending(count: int, asking: str) -> str:
    answers = f"{count} Pyrefly answer{'s' if count != 1 else ''} pending"
    if asking == "background":
        return f"semantic: {answers} (asked in the background, shown from a later search)"
    return f"semantic: {answers} (not cached; --semantic-wait MS asks Pyrefly and waits)"


def top_contexts(section: TopContexts, findings: tuple[Finding, ...]) -> list[str]:
    """Each group: a heading, one bullet per matched line, the lines fenced in that order."""
    if not section.groups:
        return []
    lines = [f"## {section.title} ({len(section.groups)} of {section.total_groups} scopes)"]
    for group in section.groups:
        scope = code(group.scope) if group.scope else "module level"
        more = (
            f", {len(group.finding_indexes)} of {group.total} shown"
            if group.total > len(group.finding_indexes)
            else ""
        )
        if group.resolves_to:
            members = [findings[i] for i in group.finding_indexes]
            head = f"calls resolved to {code(group.resolves_to)} ({_resolvers(members)}{more})"
            lines += ["", f"### {head}"]
        else:
            lines += ["", f"### {scope} ({code(group.file)}{more})"]
        by_line: dict[int, list[Finding]] = {}
        for index in group.finding_indexes:
            by_line.setdefault(findings[index].line, []).append(findings[index])
        for hits in by_line.values():
            lines += _location(hits)
    return lines


def _location(hits: list[Finding]) -> list[str]:
    """One place of a Top Context: its hits on one bullet, its line in a fence of its own (one
    fence for lines from several places would read as consecutive code)."""
    head = "- " + "; ".join(f"{_where(f)} {f.category}" for f in hits)
    return [head, *fence([_line(hits[0])], hits[0].language)]


def finding_list(
    section: FindingList, findings: tuple[Finding, ...], typed: set[str] | None = None
) -> list[str]:
    """One bullet per shown finding: place, scope, signature or call target when known. A
    section with none shown has no heading (Uses by Kind counts its kind). ``typed``: the
    definitions (``file:line``) whose signature the report has printed, so a use resolved to
    one says where, not the signature again."""
    shown = len(section.finding_indexes)
    if not shown:
        return []
    count = f"{section.total}" if shown == section.total else f"{section.total}, {shown} shown"
    if section.collapsed:
        return _collapsed(section, findings, count)
    typed = set() if typed is None else typed
    lines = [f"## {section.title} ({count})", ""]
    for index in section.finding_indexes:
        f = findings[index]
        kind = "" if len(section.categories) == 1 else f" {f.category}"
        scope = _scope(f)
        where = f" in {code(scope)}" if scope else ""
        lines.append(f"- {_where(f)}{kind}{where}{_detail(f, typed)}{_role(f)}")
    return lines


def kind_counts(section: KindCounts, findings: tuple[Finding, ...]) -> list[str]:
    """All counts on one line; shown hits of kinds without a section of their own, by kind."""
    if not section.counts:
        return []
    lines = [f"## {section.title}", ""]
    lines.append(" · ".join(f"{kind} {n}" for kind, n in section.counts.items()))
    others: dict[str, list[Finding]] = {}
    for f in findings:
        if f.category not in _LISTED:
            others.setdefault(f.category, []).append(f)
    for kind, hits in others.items():
        lines.append(f"- {kind}: " + ", ".join(_where(f) for f in hits))
    return lines


def functions(section: FunctionList) -> list[str]:
    """Relevant Functions: one line each, where to start reading."""
    if not section.functions:
        return []
    lines = [f"## {section.title}", ""]
    for i, fn in enumerate(section.functions, 1):
        signature = f" — {code(fn.signature)}" if fn.signature else ""
        found = " + ".join(fn.signals)
        entry = f"{i}. {code(fn.name)} ({code(f'{fn.file}:{fn.line}')}){signature} [{found}]"
        lines.append(entry + _namesakes(fn))
    return lines


_NAMESAKE_LINES = 6  # hand-set: line numbers shown before "…"


def _namesakes(fn: RelevantFunction) -> str:
    """`` · 7 more `possible_values` in this file (lines 254, 1177, …)``."""
    if not fn.namesakes:
        return ""
    known = sorted(n for n in fn.namesakes if n)
    shown = ", ".join(map(str, known[:_NAMESAKE_LINES])) + (
        ", …" if len(known) > _NAMESAKE_LINES else ""
    )
    where = f" (line{'s' if len(known) > 1 else ''} {shown})" if known else ""
    return f" · {len(fn.namesakes)} more {code(last_name(fn.name))} in this file{where}"


def hot_files(section: HotFiles) -> list[str]:
    if not section.files:
        return []
    more = f" (top {len(section.files)} of {section.total_files})"
    body = " · ".join(f"{code(fc.file)} {fc.count}" for fc in section.files)
    return [f"## {section.title}{more}", "", body]


def follow_ups(section: FollowUps) -> list[str]:
    if not section.follow_ups:
        return []
    lines = [f"## {section.title}", ""]
    lines += [f"- {item.why}: {code(item.command)}" for item in section.follow_ups]
    return lines


def _collapsed(section: FindingList, findings: tuple[Finding, ...], count: str) -> list[str]:
    """Non-code matches: one line of places, no snippets."""
    places = ", ".join(
        f"{_where(findings[i])} {_SHORT_KIND.get(findings[i].category, findings[i].category)}"
        for i in section.finding_indexes
    )
    return [f"## {section.title} ({count}, collapsed)", "", places]


def _scope(f: Finding) -> str | None:
    """The scope a hit sits in; a definition's own name is not its scope."""
    scope = f.containing_scope
    if scope and f.category == "definition":
        parts = re.split(r"(\.|::)", scope)
        if parts[-1] == re.split(r"\.|::", f.text)[-1]:
            return "".join(parts[:-2]) or None
    return scope


def _line(f: Finding) -> str:
    return shown_line(f.line_text, f.line_window)


def _where(f: Finding) -> str:
    return code(f"{f.file}:{f.line}:{f.col}")


def _role(f: Finding) -> str:
    return "" if f.role == "src" else f" ({f.role})"


def _detail(f: Finding, typed: set[str]) -> str:
    """A one-line signature for definitions (and Pyrefly's reference count; an unenriched
    definition's own line), the resolved target or else the call target for callsites, when
    enriched. A definition whose signature is printed joins ``typed``."""
    e = f.enrichment
    if e is None:  # e.g. a definition only the index found: its line says what it is
        if f.category != "definition" or not f.line_text.strip():
            return ""
        from cq.parse.one_line import one_line_header

        return f" — {code(one_line_header([f.line_text], f.language))}"
    if e.signature:
        refs = _references(f)
        typed.add(f"{f.file}:{f.line}")
        if "\n" not in e.signature:
            return f" — {code(e.signature)}{refs}"
        from cq.parse.one_line import one_line_signature

        return f" — {code(one_line_signature(e.signature, f.language))}{refs}"
    resolved = _resolved(f, typed)
    if resolved:
        return resolved
    if e.call and e.call.target:
        return f" → {code(e.call.target)}"
    if e.import_ and e.import_.module:
        return f" from {code(e.import_.module)}"
    return ""


def _resolved(f: Finding, typed: set[str]) -> str:
    """`` → `pkg/mod.py:12` `def f(x: int) -> str` ``: where Pyrefly resolved the name (a
    module name outside the root) and the type it gives it, the first time the report names
    that place (``typed``: the places whose signature or type is printed already); ``→
    `pkg/mod.py:12` (syntax)`` when cq's own reading of the source resolved it, ``(unique
    name)`` when it is the root's one method of that name (Pyrefly's type is then
    ``Unknown``, not shown); empty when unresolved."""
    semantic = f.enrichment.semantic if f.enrichment else None
    target = semantic.definition if semantic else None
    if semantic is None or target is None:
        return ""
    place = f"{target.file}:{target.line}" if target.file else (target.module or "?")
    if target.via in ("syntax", "unique-name"):
        kind = f" ({_RESOLVERS[target.via]})"
    elif semantic.type and place not in typed:
        kind = f" {code(semantic.type)}"
        typed.add(place)
    else:
        kind = ""
    errors = f" · error {code(semantic.diagnostics[0])}" if semantic.diagnostics else ""
    return f" → {code(place)}{kind}{errors}"


def _references(f: Finding) -> str:
    semantic = f.enrichment.semantic if f.enrichment else None
    if semantic is None or semantic.references is None:
        return ""
    n = semantic.references
    return f" · {n} reference{'s' if n != 1 else ''}"


def _enrichment_facts(f: Finding) -> str:
    """A few key facts of the answer's enrichment, on one line."""
    e = f.enrichment
    if e is None:
        return ""
    facts = []
    if e.decorators:
        facts.append("decorators " + ", ".join(code(d) for d in e.decorators))
    if e.function:
        kinds = [
            k
            for k, on in (("async", e.function.is_async), ("generator", e.function.is_generator))
            if on
        ]
        if e.function.returns_value:
            kinds.append("returns a value")
        if kinds:
            facts.append(", ".join(kinds))
    qualified = [q for q in (e.resolution.qualified_names if e.resolution else ()) if q != f.text]
    if qualified:
        facts.append("qualified " + ", ".join(code(q) for q in qualified[:2]))
    if e.rust:
        rust = [
            e.rust.visibility,
            _kind_words(e.rust.item_kind) if e.rust.item_kind else None,
            e.rust.impl_trait and f"impl {e.rust.impl_trait}",
        ]
        facts.append(" ".join(x for x in rust if x))
    semantic = e.semantic
    # a function's type is its signature, which the Answer's line has just printed
    if semantic and semantic.type and not (e.signature and _is_function_type(semantic.type)):
        facts.append(f"type {code(semantic.type)}")
    if semantic and semantic.references is not None:
        facts.append(_references(f).removeprefix(" · "))
    if e.status != "applied":
        facts.append(f"enrichment {e.status}")
    if semantic and semantic.status in ("degraded", "failed"):
        facts.append(f"semantic {semantic.status}")
    return " · ".join(x for x in facts if x)


def _is_function_type(type_text: str) -> bool:
    return type_text.startswith(("def ", "async def "))


def _kind_words(item_kind: str) -> str:
    """``function_item`` -> function, ``field_declaration`` -> field, ``enum_variant`` ->
    enum variant."""
    return item_kind.removesuffix("_item").removesuffix("_declaration").replace("_", " ")


def scores(findings: tuple[Finding, ...]) -> list[str]:
    """With ``--explain``: every shown finding in rank order with its score formula, each
    factor named by the tuned number it comes from (``cq.model.tuning``, whose notes say
    where each value came from)."""
    lines = [
        f"{rank}. {_where(f)} {f.category} ({f.role}): {_formula(f, f.explain)}"
        for rank, f in enumerate(findings, 1)
        if f.explain is not None
    ]
    return ["## Scores (rank order)", "", *lines] if lines else []


def _formula(f: Finding, b: ScoreBreakdown) -> str:
    boosts = [
        f"rank.exact_definition {b.exact_definition:g}" if b.exact_definition != 1 else "",
        f"rank.filename_exact|partial {b.filename:g}" if b.filename != 1 else "",
        f"terms {b.terms:g}: pattern weight × rank.coverage|evidence" if b.terms != 1 else "",
    ]
    named = ", ".join(x for x in boosts if x) or "none"
    focus = "rank.out_of_focus" if b.focus_multiplier != 1 else "in focus"
    return (
        f"score {f.score:g} = {b.category_weight:g} rank.category.{f.category}"
        f" × {b.role_multiplier:g} rank.role.{f.role} × {b.confidence:g} confidence"
        f" ({_confidence_source(f)}) × {b.focus_multiplier:g} {focus}"
        f" × {b.boosts:g} boosts ({named}) − {b.depth_penalty:g} rank.depth_penalty × depth"
        + _fusion(b)
    )


def _fusion(b: ScoreBreakdown) -> str:
    """A rewritten query's file order fused rg's with the index's: both ranks, and the ranks
    among the files the text names and those defining its code names when it has them."""
    named = f", named #{b.file_rank_named}" if b.file_rank_named else ""
    defined = f", defines a named name #{b.file_rank_defined}" if b.file_rank_defined else ""
    if not (b.file_rank_rg or b.file_rank_index or named or defined):
        return ""
    rg = f"#{b.file_rank_rg}" if b.file_rank_rg else "none"
    index = f"#{b.file_rank_index}" if b.file_rank_index else "none"
    weights = f" ({b.file_fusion} weights)" if b.file_fusion else ""
    return f"; file rank rg {rg}, index {index}{named}{defined}, fused {b.file_fused:g}{weights}"


_TIER_TUNING = {
    "records": "classify.records_*",
    "node": "classify.node_*",
    "heuristic": "classify.heuristic_*",
    "fallback": "classify.empty_match",
}


def _confidence_source(f: Finding) -> str:
    """Which tuned numbers made the confidence: the classifier tier's, then agreement's."""
    source = _TIER_TUNING.get(f.tier, "classify")
    agreement = f.enrichment.agreement if f.enrichment is not None else None
    if agreement is not None and agreement.status == "full":
        source += " + enrich.agreement_bonus"
    elif agreement is not None and agreement.status == "conflict":
        source += " × enrich.conflict_factor"
    return source
