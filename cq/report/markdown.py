"""Markdown rendering: the answer first, then the sections; readable at a terminal and by an agent.

Snippets are fenced as rg read them, one fence per place; paths are ``file:line:col``. The
stages' telemetry and the volatile ``run`` facts (timings, counters, the last line, so two
identical searches differ only there) are printed with ``--explain``/``-v`` only; JSON always
carries them.
Every line goes through ``cq.terminal.visible`` on the way out: text from the searched tree
(lines, names, scopes, signatures, paths) never prints a control character, and a newline in
a file name cannot start a line of its own.
"""

from __future__ import annotations

import msgspec

from cq.model import (
    FindingList,
    FollowUps,
    FunctionList,
    HotFiles,
    KindCounts,
    ReportPlan,
    SearchResult,
    TopContexts,
)
from cq.report.md_answer import answer
from cq.report.md_context import context_lines
from cq.report.md_scores import scores
from cq.report.md_sections import (
    finding_list,
    follow_ups,
    functions,
    hot_files,
    kind_counts,
    overview,
    top_contexts,
)
from cq.report.md_text import code
from cq.terminal import visible


def render_markdown(result: SearchResult, *, verbose: bool = False, tool: bool = False) -> str:
    """The report as markdown text ending in a newline; ``verbose`` (``--explain``): with the
    telemetry and the ``run:`` line; ``tool``: for an MCP tool call, whose reader names the
    search's options by the tool's arguments (``max_tokens: 300``, not ``--max-tokens 300``)
    and asks for a follow-up by calling the tool again."""
    findings, plan = result.findings, _plan(result)
    lines = [f"# cq search {code(_one_line(result.summary.query))}", ""]
    lines += answer(result, plan.answer, tool=tool)
    lines += ["", *overview(result, verbose=verbose, tool=tool)]
    typed = _answer_typed(result)
    for section in result.sections:
        block: list[str] = []
        if getattr(section, "title", None) in plan.left_out:
            continue  # it would repeat Top Contexts (``ReportPlan.left_out``)
        if isinstance(section, TopContexts):
            told = typed if plan.told_in_contexts else None
            block = top_contexts(section, findings, told)
        elif isinstance(section, FunctionList):
            block = functions(section, plan.function_names)
        elif isinstance(section, FindingList):
            block = finding_list(section, findings, plan.one_lines, typed)
        elif isinstance(section, KindCounts):
            block = kind_counts(section, findings)
        elif isinstance(section, HotFiles):
            block = hot_files(section)
        elif isinstance(section, FollowUps):
            block = follow_ups(section, tool=tool)
        if block:
            lines += ["", *block]
    around = context_lines(findings)  # -A/-B/-C
    if around:
        lines += ["", *around]
    explained = scores(findings)
    if explained:
        lines += ["", *explained]
    if verbose:
        lines += ["", _run_line(result)]
    return "\n".join(map(visible, lines)) + "\n"


def _plan(result: SearchResult) -> ReportPlan:
    """What assemble decided the report says; a result that did not come from assemble has
    none, and the report has nothing to say of it."""
    if isinstance(result.plan, msgspec.UnsetType):
        raise ValueError("render a SearchResult made by cq.assemble (it carries its ReportPlan)")
    return result.plan


def _answer_typed(result: SearchResult) -> set[str]:
    """The Answer's definition when the Answer prints its signature (``finding_list``'s
    ``typed``)."""
    primary = result.summary.primary
    if primary is None:
        return set()
    f = result.findings[primary]
    return {f"{f.file}:{f.line}"} if f.enrichment and f.enrichment.signature else set()


def _one_line(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else text
    return first if len(first) <= 80 and "\n" not in text.strip() else first[:77] + "..."


def _run_line(result: SearchResult) -> str:
    run = result.run
    parts = [f"run: {run.elapsed_ms:.0f} ms"]
    parts += [f"{name} {ms:.0f} ms" for name, ms in run.timings_ms.items()]
    counters = msgspec.to_builtins(run.counters)  # the non-zero ones, by their JSON names
    parts += [f"{name} {value}" for name, value in counters.items()]
    return " · ".join(parts)
