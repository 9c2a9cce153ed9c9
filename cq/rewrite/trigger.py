"""Whether to rewrite, and what to remember afterwards: all a search without a rewrite loads.

The rewriters themselves (vocabulary, LLM client, TOML config) load only when one runs.
"""

from __future__ import annotations

from pathlib import Path

from cq.model import Finding, SearchRequest
from cq.model.tuning import RewriteTuning
from cq.rewrite.heuristic import should_rewrite


def rewrite_trigger(request: SearchRequest, tuning: RewriteTuning | None = None) -> str | None:
    """ "forced", "heuristic", or None (search the query as typed)."""
    if request.rewrite is False:
        return None
    if request.rewrite is True:
        return "forced"
    has_context = bool(request.context) or request.follow_up
    rewrite = should_rewrite(request.query, tuning, has_context=has_context)
    return "heuristic" if rewrite else None


def remember_primary(request: SearchRequest, findings: tuple[Finding, ...], primary: int | None):
    """With ``--follow-up``, keep this search's answer for the next question's "it"."""
    if request.follow_up and primary is not None:
        from cq.rewrite.memory import remember_subject

        remember_subject(Path(request.root), findings[primary].text.split(".")[-1])
