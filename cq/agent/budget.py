"""Fit one search answer into a token budget, and say what was left out and how to get more.

The pipeline is asked for the budget (``SearchRequest.max_tokens``); if its rendered answer is
still over, the search is run again with fewer findings (whole lowest-ranked findings go, the
order of the rest never changes) until it fits. The process is warm by then, so a re-run costs
little next to the first run.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from cq.model import SearchRequest, SearchResult

MIN_BUDGET = 300
_NOTE_RESERVE = 100  # tokens kept free for the note that says what was left out


class Answer(msgspec.Struct, frozen=True):
    """The rendered report (exactly what ``cq search`` prints) plus a note for the agent."""

    text: str
    note: str | None
    result: SearchResult
    tokens: int
    reruns: int = 0


def estimate_tokens(text: str) -> int:
    """About four characters per token: close for code and English, cheap to compute."""
    return (len(text) + 3) // 4


def fit(
    request: SearchRequest,
    run: Callable[[SearchRequest], SearchResult],
    render: Callable[[SearchResult], str],
    budget: int,
    cap: int,
    *,
    is_json: bool = False,
) -> Answer:
    """Run the search and cut it down to ``budget`` tokens; ``cap`` is the server's maximum."""
    target = budget - _NOTE_RESERVE
    result = run(request)
    text = render(result)
    cut_by_budget = False
    reruns = 0
    while estimate_tokens(text) > target and result.summary.shown_findings > 1:
        shown = result.summary.shown_findings
        scaled = shown * target * 9 // (estimate_tokens(text) * 10)
        request = msgspec.structs.replace(request, limit=max(1, min(shown - 1, scaled)))
        result = run(request)
        text = render(result)
        cut_by_budget, reruns = True, reruns + 1
    if estimate_tokens(text) > target:  # one finding alone is over: keep the text parseable
        if is_json:
            result = msgspec.structs.replace(result, findings=(), sections=())
            text = render(result)
        else:
            text = _hard_cut(text, target)
        cut_by_budget = True
    note = _note(result, request, budget, cap, cut_by_budget)
    tokens = estimate_tokens(text + (note or ""))
    return Answer(text=text, note=note, result=result, tokens=tokens, reruns=reruns)


def _hard_cut(text: str, budget: int) -> str:
    """Keep whole markdown lines up to the budget."""
    keep, used = [], 0
    for line in text.splitlines(keepends=True):
        if (used + len(line)) // 4 >= budget - 40:
            break
        keep.append(line)
        used += len(line)
    return "".join(keep) + "[... cut to the token budget]\n"


def _note(
    result: SearchResult, request: SearchRequest, budget: int, cap: int, cut_by_budget: bool
) -> str | None:
    shown, total = result.summary.shown_findings, result.summary.total_findings
    if shown >= total and not cut_by_budget:
        return None
    if cut_by_budget:
        why = f"the answer was cut to the token budget ({budget} tokens)"
        more = f"a higher max_tokens (up to {cap}) or " if budget < cap else ""
    else:
        why = f"limit is {request.limit}"
        more = f"limit={min(total, request.limit * 2)} (limit=0 for all) or "
    return (
        f"cq: showing {shown} of {total} findings; {total - shown} lower-ranked left out because "
        f"{why}. To see more, call search again with {more}a narrower search "
        "(in_dir, include, lang, focus)."
    )
