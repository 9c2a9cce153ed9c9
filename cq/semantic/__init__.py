"""Semantic stage: what Pyrefly's language server says about the shown Python hits.

In: the rg matches (to start the root's server early) and the enriched, ranked findings. Out:
the same findings with ``enrichment.semantic`` (``cq.model.semantic.SemanticFacts``: hover
type, resolved definition, reference count, errors on the line, status), telemetry counts,
and a ranking refinement that uses the resolved definitions. Open ``stage.py`` first (what is
asked, the budget, the statuses), then ``server.py`` (one ``pyrefly lsp`` per root, its life
and its files), ``rpc.py`` (the JSON-RPC framing, and why not pygls), ``answers.py`` (LSP
answers to cq facts) and ``ranking.py``. Off with ``--no-semantic``, ``CQ_SEMANTIC=0`` or a
profile's ``[semantic] enabled = false`` (``settings.py``).
"""

from cq.semantic.stage import SemanticRun

__all__ = ["SemanticRun"]
