"""Fit a result into an approximate token budget by dropping whole lowest-ranked findings.

Tokens are estimated as characters / 4 of the rendered text (the format being printed), so
the budget holds for what the reader actually receives. ``fit_answer`` is what the CLI and
the MCP server both deliver: the cut result rendered, with room kept for a caller's note
(the MCP server says how to ask for more), and, when even a result without findings is over
the budget (a very long query), markdown cut at whole lines or an error for JSON.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from cq.assemble.result import build_sections
from cq.errors import UsageError
from cq.model import FunctionList, HotFiles, KindCounts, SearchRequest, SearchResult
from cq.model.tuning import ReportTuning

CHARS_PER_TOKEN = 4


class Answer(msgspec.Struct, frozen=True):
    """The rendered report within the budget, plus the caller's note about the cut."""

    text: str
    note: str | None
    result: SearchResult
    tokens: int


def estimate_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def fit_answer(
    request: SearchRequest,
    result: SearchResult,
    render: Callable[[SearchResult], str],
    *,
    note: Callable[[SearchResult], str | None] | None = None,
    is_json: bool = False,
    names: tuple[str, str] = ("--max-tokens", "--format md"),
    report: ReportTuning | None = None,
) -> Answer:
    """``result`` cut to ``request.max_tokens`` (0: no budget), rendered; the ``note`` it
    gets (if any) counts against the budget too. ``names`` are the caller's words for the
    budget and for markdown output, used in the error a JSON report over the budget gets."""
    budget = request.max_tokens
    report = report or ReportTuning()
    result = fit_budget(result, request, render, report)
    said = note(result) if note else None
    if budget > 0 and said and estimate_tokens(render(result) + said) > budget:
        tighter = msgspec.structs.replace(request, max_tokens=budget - estimate_tokens(said) - 4)
        result = fit_budget(result, tighter, render, report)
        said = note(result) if note else None
    text = render(result)
    if budget > 0 and estimate_tokens(text + (said or "")) > budget:  # the summary alone is over
        if is_json:
            raise UsageError(
                f"even without findings the JSON report exceeds {names[0]} {budget} (the query "
                f"is {len(request.query)} characters); raise {names[0]} or use {names[1]}"
            )
        text = _hard_cut(text, budget - estimate_tokens(said or "") - 10)
    return Answer(text=text, note=said, result=result, tokens=estimate_tokens(text + (said or "")))


def fit_budget(
    result: SearchResult,
    request: SearchRequest,
    render: Callable[[SearchResult], str],
    report: ReportTuning | None = None,
) -> SearchResult:
    """The largest prefix of the shown findings whose rendering fits ``request.max_tokens``."""
    budget = request.max_tokens
    if budget <= 0 or estimate_tokens(render(result)) <= budget:
        return result
    low, high = 0, len(result.findings) - 1  # ``low`` always fits or is 0; ``high + 1`` does not
    report = report or ReportTuning()
    best = keep_first(result, request, 0, report)
    while low <= high:
        mid = (low + high) // 2
        candidate = keep_first(result, request, mid, report)
        if estimate_tokens(render(candidate)) <= budget:
            best, low = candidate, mid + 1
        else:
            high = mid - 1
    return best


def keep_first(
    result: SearchResult, request: SearchRequest, keep: int, report: ReportTuning
) -> SearchResult:
    """The result with only its ``keep`` best findings, sections rebuilt, the cut recorded."""
    shown = result.findings[:keep]
    summary = result.summary
    dropped = len(result.findings) - len(shown)
    omitted = msgspec.structs.replace(
        summary.omitted,
        by_budget=summary.omitted.by_budget + dropped,
        token_budget=request.max_tokens,
    )
    primary = summary.primary if summary.primary is not None and summary.primary < keep else None
    kinds = next(s for s in result.sections if isinstance(s, KindCounts))
    hot = next(s for s in result.sections if isinstance(s, HotFiles))
    summary = msgspec.structs.replace(
        summary, shown_findings=len(shown), omitted=omitted, primary=primary
    )
    functions = next((s for s in result.sections if isinstance(s, FunctionList)), None)
    sections = build_sections(request, shown, summary, kinds, hot, report, functions)
    return msgspec.structs.replace(result, summary=summary, sections=sections, findings=shown)


def _hard_cut(text: str, budget: int) -> str:
    """Whole markdown lines up to the budget."""
    keep, used = [], 0
    for line in text.splitlines(keepends=True):
        used += estimate_tokens(line)
        if used > budget:
            break
        keep.append(line)
    return "".join(keep) + "[... cut to the token budget]\n"
