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
    SearchResult,
    TopContexts,
)
from cq.report.md_finding import SHORT_KIND, detail, line_of, resolvers, role_of, scope_of, where_of
from cq.report.md_scope import dropped_by_scope
from cq.report.md_text import code, fence

_LISTED = frozenset(
    {"definition", "callsite", "import", "from_import", *SHORT_KIND}
)  # kinds with a section of their own


def _counted(n: int, noun: str) -> str:
    """``1 finding``, ``2 findings``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def overview(result: SearchResult, *, verbose: bool = False) -> list[str]:
    """One or two lines: counts, what was left out, mode, languages, focus, roles, rewrite;
    ``verbose`` (``--explain``): the stages' telemetry too."""
    s = result.summary
    shown = f"{_counted(s.total_findings, 'finding')}, {s.shown_findings} shown"
    left = []
    if s.omitted.by_limit:
        left.append(f"{s.omitted.by_limit} beyond --limit")
    if s.omitted.by_budget:
        left.append(f"{s.omitted.by_budget} dropped to fit --max-tokens {s.omitted.token_budget}")
    if left:
        shown += f" ({'; '.join(left)})"
    langs = ", ".join(
        f"{ls.language} {ls.stats.total_matches} in {_counted(ls.stats.matched_files, 'file')}"
        for ls in s.languages
        if ls.stats.total_matches
    )
    mode = " → ".join(s.mode_chain)
    roles = ", ".join(f"{role} {n}" for role, n in s.roles.items())
    scope = "" if s.lang_scope == "auto" else f" (--lang {s.lang_scope})"
    if not langs:  # no rg match: any finding is the repository index's
        langs = "no text matched, the index found these" if s.total_findings else "no files matched"
    parts = [shown, f"mode {mode}", langs + scope, f"focus {s.focus}"]
    if roles:
        parts.append(f"roles {roles}")
    if s.stats.caps_hit != "none" or s.stats.timed_out:
        parts.append(f"caps hit {s.stats.caps_hit}" + (", timed out" if s.stats.timed_out else ""))
    lines = [" · ".join(parts)]
    if s.stats.dropped_by_scope:
        lines.append(dropped_by_scope(s.stats.dropped_by_scope, s.lang_scope))
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
        lines.append(_pending(s.semantic.pending, s.semantic.asking))
    if s.telemetry.index is not None and s.telemetry.index.stale:
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
            head = f"calls resolved to {code(group.resolves_to)} ({resolvers(members)}{more})"
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
    head = "- " + "; ".join(f"{where_of(f)} {f.category}" for f in hits)
    return [head, *fence([line_of(hits[0])], hits[0].language)]


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


def follow_ups(section: FollowUps) -> list[str]:
    if not section.follow_ups:
        return []
    lines = [f"## {section.title}", ""]
    lines += [f"- {item.why}: {code(item.command)}" for item in section.follow_ups]
    return lines


def _collapsed(section: FindingList, findings: tuple[Finding, ...], count: str) -> list[str]:
    """Non-code matches: one line of places, no snippets."""
    places = ", ".join(
        f"{where_of(findings[i])} {SHORT_KIND.get(findings[i].category, findings[i].category)}"
        for i in section.finding_indexes
    )
    return [f"## {section.title} ({count}, collapsed)", "", places]
