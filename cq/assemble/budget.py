"""Fit a result into an approximate token budget by dropping whole lowest-ranked findings.

Tokens are estimated as characters / 4 of the rendered text (the format being printed), so
the budget holds for what the reader actually receives.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from cq.assemble.result import build_sections
from cq.model import FunctionList, HotFiles, KindCounts, SearchRequest, SearchResult

CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def fit_budget(
    result: SearchResult, request: SearchRequest, render: Callable[[SearchResult], str]
) -> SearchResult:
    """The largest prefix of the shown findings whose rendering fits ``request.max_tokens``."""
    budget = request.max_tokens
    if budget <= 0 or estimate_tokens(render(result)) <= budget:
        return result
    low, high = 0, len(result.findings) - 1  # ``low`` always fits or is 0; ``high + 1`` does not
    best = keep_first(result, request, 0)
    while low <= high:
        mid = (low + high) // 2
        candidate = keep_first(result, request, mid)
        if estimate_tokens(render(candidate)) <= budget:
            best, low = candidate, mid + 1
        else:
            high = mid - 1
    return best


def keep_first(result: SearchResult, request: SearchRequest, keep: int) -> SearchResult:
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
    sections = build_sections(request, shown, summary, kinds, hot, functions)
    return msgspec.structs.replace(result, summary=summary, sections=sections, findings=shown)
