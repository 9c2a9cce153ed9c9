"""Semantic stage: what Pyrefly's language server says about the shown Python hits.

In: the rg matches (to start a long-lived process's server early) and the enriched, ranked
findings. Out: the same findings with ``enrichment.semantic`` (``cq.model.semantic.
SemanticFacts``: hover type, resolved definition, reference count, errors on the line,
status), the count of answers still pending (``SemanticSummary``), telemetry counts, and a
ranking refinement that uses the resolved definitions. A search shows only the answers cq's
cache holds, so the machine's load never changes a report. Open ``stage.py`` first (cache,
pending, who asks), then ``memo.py`` (the answer cache: its keys and what they cover),
``later.py`` (a long-lived process asks in the background), ``asking.py`` (one batch of
questions), ``questions.py`` (what is asked), ``server.py`` (one ``pyrefly lsp`` per root,
its life and its files) and ``pool.py``, ``rpc.py`` (the JSON-RPC framing, and why not
pygls), ``answers.py`` (LSP answers to cq facts) and ``ranking.py``. A callsite Pyrefly
leaves without a definition gets cq's own reading of the source when it is certain (``via:
syntax``): ``fallback.py`` runs it beside Pyrefly, ``syntax_resolve.py`` follows the call,
with ``scopes.py`` (what a scope binds), ``values.py``, ``classes.py`` (C3 order) and
``fixtures.py`` (pytest's fixture lookup). Off with ``--no-semantic``, ``CQ_SEMANTIC=0`` or
a profile's ``[semantic] enabled = false`` (``cq/settings.py``); the stage's modules are
imported only when it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cq.model import Finding, RawMatch, Scope
    from cq.parse import Corpus
    from cq.semantic.stage import SemanticRun
    from cq.settings import SemanticSettings


def begin(
    scope: Scope,
    limit: int,
    matches: tuple[RawMatch, ...],
    corpus: Corpus,
    settings: SemanticSettings,
    *,
    orders: bool = False,
) -> SemanticRun | None:
    """The search's semantic run over the files of ``scope`` (``limit``: the findings shown),
    started; None when the stage is off (``settings``, resolved
    at the search's front by ``cq.settings``) or no hit is Python (then nothing more of the
    stage is imported: it costs ~4 ms). ``orders``: the findings' order and the Answer depend
    on Pyrefly's answers (a callers question, a dotted name: ``ranking.py``), so the run waits
    for them (``order_wait_ms``) instead of leaving them to a later search."""
    if not any(m.language == "python" for m in matches):
        return None
    if not settings.enabled:
        return None
    from cq.semantic.stage import SemanticRun

    return SemanticRun.begin(scope, limit, matches, corpus, settings, orders=orders)


def keep_servers_warm() -> None:
    """For a long-lived process (``cq mcp``'s search workers, cq's server): keep the root's
    server warm and ask it, in the background, for the answers a search found missing."""
    from cq.semantic.pool import pool

    pool().keep_warm()


__all__ = ["begin", "keep_servers_warm"]


def resolves_to(use: Finding, definition: Finding) -> bool:
    """Whether ``use`` was resolved (Pyrefly, cq's syntax reading, a unique name) to
    ``definition``: what a callers question's Answer lists."""
    from cq.semantic.ranking import resolves_to as resolved

    return resolved(use, definition)
