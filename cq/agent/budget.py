"""Fit one MCP answer into a token budget, and say what was left out and how to get more.

The cut itself is the report's own (``cq.assemble.fit_budget``: whole lowest-ranked findings
go, the order of the rest never changes, the summary records how many). This module adds the
note an agent needs to ask for more, in the MCP tool's argument names, and keeps the note
itself inside the budget.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from cq.assemble import estimate_tokens, fit_budget
from cq.errors import UsageError
from cq.model import SearchRequest, SearchResult

MIN_BUDGET = 300  # per call; below this even a markdown summary does not fit
MIN_SERVER_BUDGET = 2000  # the server's cap: a JSON summary is ~900 tokens, a finding up to ~900


class Answer(msgspec.Struct, frozen=True):
    """The rendered report (what ``cq search`` prints with the same budget) plus a note."""

    text: str
    note: str | None
    result: SearchResult
    tokens: int


def fit(
    request: SearchRequest,
    result: SearchResult,
    render: Callable[[SearchResult], str],
    cap: int,
    *,
    is_json: bool = False,
) -> Answer:
    """Cut ``result`` to ``request.max_tokens`` tokens including the note; ``cap`` is the
    server's maximum, named in the note when the caller asked for less."""
    budget = request.max_tokens
    result = fit_budget(result, request, render)
    note = _note(result, request, cap)
    if note and estimate_tokens(render(result) + note) > budget:
        tighter = msgspec.structs.replace(request, max_tokens=budget - estimate_tokens(note) - 4)
        result = fit_budget(result, tighter, render)
        note = _note(result, request, cap)
    text = render(result)
    if estimate_tokens(text + (note or "")) > budget:  # the summary alone is over (a long query)
        if is_json:
            raise UsageError(
                f"even without findings the JSON report exceeds max_tokens {budget} "
                f"(the query is {len(request.query)} characters); raise max_tokens or use format md"
            )
        text = _hard_cut(text, budget - estimate_tokens(note or "") - 10)
    return Answer(text=text, note=note, result=result, tokens=estimate_tokens(text + (note or "")))


def _hard_cut(text: str, budget: int) -> str:
    """Whole markdown lines up to the budget."""
    keep, used = [], 0
    for line in text.splitlines(keepends=True):
        used += estimate_tokens(line)
        if used > budget:
            break
        keep.append(line)
    return "".join(keep) + "[... cut to the token budget]\n"


def _note(result: SearchResult, request: SearchRequest, cap: int) -> str | None:
    summary = result.summary
    by_budget, by_limit = summary.omitted.by_budget, summary.omitted.by_limit
    if not (by_budget or by_limit):
        return None
    why = []
    if by_budget:
        why.append(f"{by_budget} to fit max_tokens {request.max_tokens}")
    if by_limit:
        why.append(f"{by_limit} beyond limit {request.limit}")
    more = []
    if by_budget and request.max_tokens < cap:
        more.append(f"a higher max_tokens (up to {cap})")
    if by_limit:
        more.append(f"limit={request.limit * 2} (0 = all)")
    more.append("a narrower search (in_dir, include, lang, focus)")
    return (
        f"cq: showing {summary.shown_findings} of {summary.total_findings} findings; left out "
        f"(lowest-ranked): {' and '.join(why)}. For more, call search again with "
        f"{' or '.join(more)}."
    )
