"""What an MCP answer says when findings were left out, and how to get more.

The cut itself is the report's own (``cq.assemble.fit_answer``, as for ``cq search``: whole
lowest-ranked findings go, the order of the rest never changes, the summary records how
many). This module writes the note an agent needs to ask for more, in the MCP tool's
argument names; ``fit_answer`` keeps the note itself inside the budget.
"""

from __future__ import annotations

from cq.env import env_minimum
from cq.model import SearchRequest, SearchResult
from cq.model.options import MCP_MIN_TOKENS

MIN_BUDGET = MCP_MIN_TOKENS  # per call; below this even a markdown summary does not fit
# The server's cap (--max-tokens, CQ_MCP_MAX_TOKENS: 2000, one row of cq.env.SETTINGS): a JSON
# summary is ~900 tokens, a finding up to ~900.
MIN_SERVER_BUDGET = env_minimum("CQ_MCP_MAX_TOKENS")


def left_out_note(result: SearchResult, request: SearchRequest, cap: int) -> str | None:
    """Which findings the answer leaves out and why; ``cap`` is the server's maximum budget,
    named when the caller asked for less."""
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


def call_budget(asked: int | None, cap: int) -> int:
    """One call's token budget: what it asked for (else the server's), never above the
    server's cap nor below ``MIN_BUDGET``."""
    return max(MIN_BUDGET, min(asked or cap, cap))
