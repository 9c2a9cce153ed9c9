"""Enrichment: detail for the hits a report shows, never for all of them.

In: the search's ``Corpus``, the shown ``Finding``s (best first), ``EnrichSettings``. Out:
``EnrichOutcome`` with each shown finding's ``symtable`` flags (``bindings.py``) and
``Enrichment`` (``cq.model.enrichment``), telemetry counts and stage timings. Open
``shown.py`` first (budgets, store, per-hit loop), ``computed.py`` (one hit from its file)
and ``share.py`` (a helper's part of a cold search's hits; ``standby.py``, the child a
one-shot search forks at its start to import LibCST, computes them all), then
``python.py`` (the five Python stages: ``py_structure`` on ast-grep, ``py_ast_stage``,
``py_import_stage``, ``py_libcst_stage`` on a ``skeleton``, ``py_structure`` on
tree-sitter + ``parse_quality``), ``rust.py``, ``agreement.py`` and ``budget.py``. Every
stage fails open (``stages.py``).
"""

from cq.enrich.computed import EnrichSettings
from cq.enrich.shown import EnrichOutcome, HitTimings, cold_start, enrich_shown

__all__ = ["EnrichOutcome", "EnrichSettings", "HitTimings", "cold_start", "enrich_shown"]
