"""Fit a result into an approximate token budget by dropping whole lowest-ranked findings.

Tokens are estimated as characters / 4 of the rendered text (the format being printed), so
the budget holds for what the reader actually receives. The renderer is the caller's
(``cq.report``'s, handed in by the CLI and the MCP server): assemble imports no report, and a
size estimated per finding would miss what the markdown adds around them (Top Contexts
groups, fences, headings), so the cut is measured on the rendered text. ``fit_answer`` is
what the CLI and the MCP server both deliver: the cut result rendered, with room kept for a
caller's note (the MCP server says how to ask for more).

The Answer is the floor of every budget: findings go lowest-ranked first, but never the ones
the Answer needs (``answer.answer_needs``: the primary definition, else the best hit, and a
callers question's first callsites); each cut result keeps the Answer decided before the cut
(at its findings' new places) and gets the rest of its plan made again. When even
the findings down to them are over the budget, those alone are kept; markdown still over is
cut at whole lines after the Answer, and a budget below the header and the Answer (or, for
JSON, below the whole report of that one finding) is an error naming the minimum.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import msgspec

from cq.assemble.answer import answer_needs, kept_answer, planned
from cq.assemble.result import build_sections
from cq.errors import UsageError
from cq.model import Echo, FunctionList, HotFiles, KindCounts, SearchResult
from cq.model.tuning import ReportTuning

CHARS_PER_TOKEN = 4
_CUT = "[... cut to the token budget]\n"
_FENCE = re.compile(r"^(`{3,})")
# Room a JSON minimum keeps for the run's volatile facts (timings, counters), which can gain
# a digit each on the next run: the minimum named is one that works again.
_RUN_SLACK = 16


class Fitted(msgspec.Struct, frozen=True):
    """The rendered report within the budget, plus the caller's note about the cut."""

    text: str
    note: str | None
    result: SearchResult
    tokens: int


def estimate_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def fit_answer(
    echo: Echo,
    result: SearchResult,
    render: Callable[[SearchResult], str],
    *,
    note: Callable[[SearchResult], str | None] | None = None,
    is_json: bool = False,
    names: tuple[str, str] = ("--max-tokens", "--format md"),
    report: ReportTuning | None = None,
) -> Fitted:
    """``result`` cut to ``echo.max_tokens`` (0: no budget; ``Settings.echo``), rendered;
    the ``note`` it gets (if any) counts against the budget too. ``names`` are the caller's
    words for the budget and for markdown output, used in the error a budget below the
    Answer gets."""
    budget = echo.max_tokens
    report = report or ReportTuning()
    result = fit_budget(result, echo, render, report)
    said = note(result) if note else None
    if budget > 0 and said and estimate_tokens(render(result) + said) > budget:
        tighter = msgspec.structs.replace(echo, max_tokens=budget - estimate_tokens(said) - 4)
        result = _as_budget(fit_budget(result, tighter, render, report), budget)
        said = note(result) if note else None
    text = render(result)
    extra = estimate_tokens(said or "")
    if budget > 0 and estimate_tokens(text) + extra > budget:  # the Answer's finding alone is over
        if is_json:
            need = estimate_tokens(text) + extra + _RUN_SLACK
            raise UsageError(
                f"the JSON report with its Answer needs {need} tokens, over {names[0]} {budget}: "
                f"raise {names[0]} to at least {need} or use {names[1]}"
            )
        head = _answer_head(text)
        need = estimate_tokens(head + _CUT) + extra
        if need > budget:
            raise UsageError(
                f"{names[0]} {budget} is below the {need} tokens the header line and the "
                f"Answer need: raise it to at least {need}"
            )
        text = _hard_cut(text, budget - extra, len(head))
    return Fitted(text=text, note=said, result=result, tokens=estimate_tokens(text) + extra)


def _as_budget(result: SearchResult, budget: int) -> SearchResult:
    """``result`` recording the caller's budget, not the share left after the note (the
    report and its note would name two budgets)."""
    if not result.summary.omitted.by_budget:
        return result
    omitted = msgspec.structs.replace(result.summary.omitted, token_budget=budget)
    summary = msgspec.structs.replace(result.summary, omitted=omitted)
    return msgspec.structs.replace(result, summary=summary)


def fit_budget(
    result: SearchResult,
    echo: Echo,
    render: Callable[[SearchResult], str],
    report: ReportTuning | None = None,
) -> SearchResult:
    """The largest prefix of the shown findings whose rendering fits ``echo.max_tokens``,
    never shorter than the findings down to the Answer's; when even that is over the budget,
    the Answer's finding alone (``_answer_only``)."""
    budget = echo.max_tokens
    if budget <= 0 or estimate_tokens(render(result)) <= budget:
        return result
    result = planned(result, compact=True)  # what repeats Top Contexts goes before any finding
    if estimate_tokens(render(result)) <= budget:
        return result
    report = report or ReportTuning()
    floor = _answer_floor(result)
    best = keep_first(result, echo, floor, report)
    if estimate_tokens(render(best)) > budget:
        return _answer_only(result, echo, report) if floor > 1 else best
    low, high = floor + 1, len(result.findings) - 1  # ``high + 1`` does not fit
    while low <= high:
        mid = (low + high) // 2
        candidate = keep_first(result, echo, mid, report)
        if estimate_tokens(render(candidate)) <= budget:
            best, low = candidate, mid + 1
        else:
            high = mid - 1
    return best


def keep_first(result: SearchResult, echo: Echo, keep: int, report: ReportTuning) -> SearchResult:
    """The result with only its ``keep`` best findings, sections rebuilt, the cut recorded."""
    return _keep(result, echo, tuple(range(min(keep, len(result.findings)))), report)


def _answer_floor(result: SearchResult) -> int:
    """How many leading findings the Answer needs (``answer_needs``); none when nothing was
    found."""
    needs = answer_needs(result)
    return needs[-1] + 1 if needs else 0


def _answer_only(result: SearchResult, echo: Echo, report: ReportTuning) -> SearchResult:
    """The result with the Answer's findings alone (a subset, so no order changes)."""
    return _keep(result, echo, answer_needs(result) or (0,), report)


def _keep(
    result: SearchResult, echo: Echo, indexes: tuple[int, ...], report: ReportTuning
) -> SearchResult:
    shown = tuple(result.findings[i] for i in indexes)
    summary = result.summary
    dropped = len(result.findings) - len(shown)
    omitted = msgspec.structs.replace(
        summary.omitted,
        by_budget=summary.omitted.by_budget + dropped,
        token_budget=echo.max_tokens,
    )
    old = summary.primary
    primary = indexes.index(old) if old is not None and old in indexes else None
    kinds = next(s for s in result.sections if isinstance(s, KindCounts))
    hot = next(s for s in result.sections if isinstance(s, HotFiles))
    summary = msgspec.structs.replace(
        summary, shown_findings=len(shown), omitted=omitted, primary=primary
    )
    functions = next((s for s in result.sections if isinstance(s, FunctionList)), None)
    sections = build_sections(echo, shown, summary, kinds, hot, report, functions)
    cut = msgspec.structs.replace(result, summary=summary, sections=sections, findings=shown)
    said = result.plan.answer if not isinstance(result.plan, msgspec.UnsetType) else None
    return planned(cut, compact=True, answer=kept_answer(said, indexes) if said else None)


def _answer_head(markdown: str) -> str:
    """The report's first block: its header line and the Answer, up to the first blank line
    outside a fence (the markdown report leaves one after the Answer, and a fenced snippet
    may hold blank lines of its own)."""
    lines = markdown.splitlines(keepends=True)
    fence: str | None = None
    for i, line in enumerate(lines[2:], start=2):
        text = line.rstrip("\n")
        if fence is None and not text.strip():
            return "".join(lines[:i])
        opening = _FENCE.match(text)
        if fence is None and opening:
            fence = opening.group(1)
        elif fence is not None and text == fence:
            fence = None
    return markdown


def _hard_cut(text: str, budget: int, keep_chars: int = 0) -> str:
    """Whole markdown lines up to the budget, the first ``keep_chars`` (the header and the
    Answer) always."""
    keep, used = [text[:keep_chars]], estimate_tokens(text[:keep_chars] + _CUT)
    for line in text[keep_chars:].splitlines(keepends=True):
        used += estimate_tokens(line)
        if used > budget:
            break
        keep.append(line)
    return "".join(keep) + _CUT
