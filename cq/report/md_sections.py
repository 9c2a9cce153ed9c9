"""Markdown blocks of the report, one function per section (each returns its lines); the
Answer is ``md_answer.py``, the Scores ``md_scores.py``, one finding's line ``md_finding.py``."""

from __future__ import annotations

import msgspec

from cq.model import (
    Finding,
    FindingList,
    FollowUps,
    FunctionList,
    HotFiles,
    KindCounts,
    RelevantFunction,
    RewriteSummary,
    SearchResult,
    TopContexts,
)
from cq.report.md_finding import (
    SHORT_KIND,
    detail,
    diagnostic,
    line_of,
    references,
    resolved_by,
    resolved_target,
    resolvers,
    role_of,
    scope_of,
    where_of,
)
from cq.report.md_scope import dropped_by_scope
from cq.report.md_text import code, fence, option, option_name

_LISTED = frozenset(
    {"definition", "callsite", "import", "from_import", *SHORT_KIND}
)  # kinds with a section of their own


def _counted(n: int, noun: str) -> str:
    """``1 finding``, ``2 findings``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def overview(result: SearchResult, *, verbose: bool = False, tool: bool = False) -> list[str]:
    """One or two lines: counts, what was left out, mode, languages, focus, roles, rewrite;
    ``verbose`` (``--explain``): the stages' telemetry too."""
    s = result.summary
    shown = f"{_counted(s.total_findings, 'finding')}, {s.shown_findings} shown"
    left = []
    if s.omitted.by_limit:
        left.append(f"{s.omitted.by_limit} beyond {option_name('--limit', tool=tool)}")
    if s.omitted.by_budget:
        budget = option("--max-tokens", str(s.omitted.token_budget), tool=tool)
        left.append(f"{s.omitted.by_budget} dropped to fit {budget}")
    if left:
        shown += f" ({'; '.join(left)})"
    langs = ", ".join(
        f"{ls.language} {ls.stats.total_matches} in {_counted(ls.stats.matched_files, 'file')}"
        for ls in s.languages
        if ls.stats.total_matches
    )
    roles = ", ".join(f"{role} {n}" for role, n in s.roles.items())
    scope = "" if s.lang_scope == "auto" else f" ({option('--lang', s.lang_scope, tool=tool)})"
    if not langs:  # no rg match: any finding is the repository index's
        langs = "no text matched, the index found these" if s.total_findings else "no files matched"
    parts = [shown, _searched_as(s.mode_chain, s.rewrite), langs + scope]
    if s.focus != "all":
        parts.append(f"{s.focus} first")
    if roles:
        parts.append(f"roles {roles}")
    if s.stats.caps_hit != "none" or s.stats.timed_out:
        parts.append(f"caps hit {s.stats.caps_hit}" + (", timed out" if s.stats.timed_out else ""))
    lines = [" · ".join(parts)]
    if s.stats.dropped_by_scope:
        lines.append(dropped_by_scope(s.stats.dropped_by_scope, s.lang_scope, tool=tool))
    telemetry = msgspec.to_builtins(s.telemetry)  # the stages that counted, by JSON name
    if verbose and telemetry:
        lines.append(
            "telemetry: "
            + "; ".join(
                f"{name} " + ", ".join(f"{key} {n}" for key, n in counts.items())
                for name, counts in telemetry.items()
            )
        )
    held = s.telemetry.index
    if held is not None and held.unused:  # a later run, with the index, may answer otherwise
        lines.append(f"Index: {held.unused}.")
    if s.semantic is not None and s.semantic.pending:
        lines.append(_pending(s.semantic.pending, s.semantic.asking, tool))
    if s.semantic is not None and s.semantic.partial:  # their definitions are final
        hits = _counted(s.semantic.partial, "shown hit")
        lines.append(f"reference counts and errors of {hits} still being worked out (Pyrefly)")
    if s.telemetry.index is not None and s.telemetry.index.stale:
        lines.append(
            "the index may be behind: another cq is updating it, so files changed since its "
            "last update are missing or out of date here"
        )
    if s.asked_name and s.respelled:
        lines.append(
            f"asked about {code(s.respelled)}, which no file holds: searched as "
            f"{code(s.asked_name)}, the name the tree defines with its words"
        )
    elif s.asked_name and s.subject:
        lines.append(
            f"`it` read as {code(s.subject)}, {_named_by(result, tool)}: searched as that name"
        )
    elif s.asked_name:
        lines.append(f"asked about {code(s.asked_name)}: searched as that name")
    if s.rewrite and s.rewrite.applied:
        lines.append(_rewritten(s.rewrite))
        reason = s.rewrite.fallback_reason
        # cq's default model server not answering is no news; one the user named is
        if reason and s.rewrite.llm_configured and reason != "llm disabled by config":
            lines.append(f"your model was not used, so the rewrite was made offline: {reason}")
    return lines


def _named_by(result: SearchResult, tool: bool) -> str:
    """Where "it" found its name: the context given, else the last follow-up's answer."""
    question = result.question
    if not isinstance(question, msgspec.UnsetType) and question.context:
        return f"the name {code(option_name('--context', tool=tool))} gave"
    return f"the last {code(option('--follow-up', tool=tool))} search's answer"


_AS = {"identifier": "a name", "literal": "text", "regex": "a regex"}


def _searched_as(chain: tuple[str, ...], rewrite: RewriteSummary | None) -> str:
    """``searched as a name, then as text``: the modes the search went through, in words. A
    rewritten query's hits are the rewrite's, which the line below the header lists: a
    question read as one was searched as those (its words as typed are not what it found),
    a query rewritten after finding nothing as typed first as typed, then as those."""
    typed = ", then as ".join(_AS.get(mode, mode) for mode in chain)
    if rewrite is None or not rewrite.applied:
        return f"searched as {typed}"
    into = _kinds_of(rewrite)
    if rewrite.trigger == "zero_results":
        return f"searched as {typed}, then as the {into} below"
    return f"searched as the {into} below"


# Why and how a query was rewritten, by ``RewriteSummary.trigger``.
_WHY = {
    "zero_results": "no results for the words as typed, so they were rewritten {how} into {into}",
    "heuristic": "read as a question and rewritten {how} into {into}",
    "forced": "rewritten {how} as asked, into {into}",
}


def _kinds_of(rewrite: RewriteSummary) -> str:
    """What a rewrite produced, in words: ``names``, ``phrases`` or both."""
    names, phrases = rewrite.identifiers, rewrite.literals
    return "names and phrases" if names and phrases else "names" if names else "phrases"


def _rewritten(rewrite: RewriteSummary) -> str:
    """``read as a question and rewritten offline into names: `a`, `b```."""
    names, phrases = rewrite.identifiers, rewrite.literals
    into = _kinds_of(rewrite)
    terms = ", ".join(code(t) for t in (*names, *phrases))
    by = rewrite.rewriter.removeprefix("llm:")
    how = "offline" if rewrite.rewriter == "offline" else f"by the model {by}"
    said = _WHY.get(rewrite.trigger, "rewritten {how} into {into}")
    return f"{said.format(how=how, into=into)}: {terms}"


def _pending(count: int, asking: str, tool: bool) -> str:
    hits = _counted(count, "shown hit")
    if asking == "background" or tool:  # the tool takes no semantic_wait: a later call has them
        return f"types of {hits} still being worked out (Pyrefly); run again for them"
    return f"types of {hits} not worked out yet (Pyrefly); --semantic-wait MS waits for them"


def top_contexts(
    section: TopContexts, findings: tuple[Finding, ...], told: set[str] | None = None
) -> list[str]:
    """Each group: a heading, one bullet per matched line, the lines fenced in that order.
    ``told`` (``ReportPlan.told_in_contexts``: the lists are left out): the places whose
    signature or type the report has printed, and each bullet says what the lists would have
    and the line does not (``finding_list``'s ``typed``)."""
    if not section.groups:
        return []
    lines = [f"## {section.title} ({len(section.groups)} of {section.total_groups} scopes)"]
    for group in section.groups:
        scope = code(group.scope) if group.scope else "module level"
        if group.unparsed:  # the line alone was read: where it sits is not known
            scope = "scope unknown (file not parsed)"
        more = (
            f", {len(group.finding_indexes)} of {group.total} shown"
            if group.total > len(group.finding_indexes)
            else ""
        )
        if group.resolves_to:
            members = [findings[i] for i in group.finding_indexes]
            head = f"calls resolved to {code(group.resolves_to)} ({resolvers(members)}{more})"
            lines += ["", f"### {head}"]
        else:
            lines += ["", f"### {scope} ({code(group.file)}{more})"]
        # a group of calls resolved to one place holds lines of several files
        by_line: dict[tuple[str, int], list[Finding]] = {}
        for index in group.finding_indexes:
            f = findings[index]
            by_line.setdefault((f.file, f.line), []).append(f)
        # where the calls resolve is the heading's; who resolved each, when not all alike
        each: bool | None = None
        if group.resolves_to:
            each = len(resolved_by([findings[i] for i in group.finding_indexes])) > 1
        for hits in by_line.values():
            lines += _location(hits, told, each)
    return lines


def _location(hits: list[Finding], told: set[str] | None, each: bool | None) -> list[str]:
    """One place of a Top Context: its hits on one bullet, its line in a fence of its own (one
    fence for lines from several places would read as consecutive code)."""
    head = "- " + "; ".join(f"{where_of(f)} {f.category}{_beyond(f, told, each)}" for f in hits)
    return [head, *fence([line_of(hits[0])], hits[0].language)]


def _beyond(f: Finding, told: set[str] | None, each: bool | None) -> str:
    """What a finding's line in the lists says that its fenced line does not, when the lists
    are left out (``told``): a definition's references; where a use resolves, or in a group
    of calls resolved to one place (``each`` not None) who resolved it when the group's
    resolvers differ; Pyrefly's error; the finding's role."""
    if told is None:
        return ""
    if f.category == "definition":
        more = references(f)
    elif each is None:
        more = resolved_target(f, told)
    else:
        more = (f", by {resolvers([f])}" if each else "") + diagnostic(f)
    return f"{more}{role_of(f)}"


def finding_list(
    section: FindingList,
    findings: tuple[Finding, ...],
    one_lines: tuple[str, ...],
    typed: set[str] | None = None,
) -> list[str]:
    """One bullet per shown finding: place, scope, signature or call target when known. A
    section with none shown has no heading (Uses by Kind counts its kind). ``one_lines``:
    ``ReportPlan.one_lines``; ``typed``: the definitions (``file:line``) whose signature the
    report has printed, so a use resolved to one says where, not the signature again."""
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
        scope = scope_of(f)
        where = f" in {code(scope)}" if scope else ""
        about = detail(f, typed, one_lines[index])
        lines.append(f"- {where_of(f)}{kind}{where}{about}{role_of(f)}")
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
        lines.append(f"- {kind}: " + ", ".join(where_of(f) for f in hits))
    return lines


def functions(section: FunctionList, names: tuple[str, ...]) -> list[str]:
    """Relevant Functions: one line each, where to start reading (``names``: each one's own
    name, ``ReportPlan.function_names``)."""
    if not section.functions:
        return []
    lines = [f"## {section.title}", ""]
    for i, (fn, name) in enumerate(zip(section.functions, names, strict=True), 1):
        signature = f" — {code(fn.signature)}" if fn.signature else ""
        found = " + ".join(fn.signals)
        entry = f"{i}. {code(fn.name)} ({code(f'{fn.file}:{fn.line}')}){signature} [{found}]"
        lines.append(entry + _namesakes(fn, name))
    return lines


_NAMESAKE_LINES = 6  # hand-set: line numbers shown before "…"


def _namesakes(fn: RelevantFunction, name: str) -> str:
    """`` · 7 more `possible_values` in this file (lines 254, 1177, …)``."""
    if not fn.namesakes:
        return ""
    known = sorted(n for n in fn.namesakes if n)
    shown = ", ".join(map(str, known[:_NAMESAKE_LINES])) + (
        ", …" if len(known) > _NAMESAKE_LINES else ""
    )
    where = f" (line{'s' if len(known) > 1 else ''} {shown})" if known else ""
    return f" · {len(fn.namesakes)} more {code(name)} in this file{where}"


def hot_files(section: HotFiles) -> list[str]:
    if not section.files:
        return []
    more = f" (top {len(section.files)} of {section.total_files})"
    body = " · ".join(f"{code(fc.file)} {fc.count}" for fc in section.files)
    return [f"## {section.title}{more}", "", body]


def follow_ups(section: FollowUps, *, tool: bool = False) -> list[str]:
    """Each next search as its command line, or (``tool``) as the tool call's arguments."""
    if not section.follow_ups:
        return []
    lines = [f"## {section.title}", ""]
    for item in section.follow_ups:
        if tool and isinstance(item.arguments, str):
            lines.append(f"- {item.why}: search with {code(item.arguments)}")
        else:
            lines.append(f"- {item.why}: {code(item.command)}")
    return lines


def _collapsed(section: FindingList, findings: tuple[Finding, ...], count: str) -> list[str]:
    """Non-code matches: one line of places, no snippets."""
    places = ", ".join(
        f"{where_of(findings[i])} {SHORT_KIND.get(findings[i].category, findings[i].category)}"
        for i in section.finding_indexes
    )
    return [f"## {section.title} ({count}, collapsed)", "", places]
