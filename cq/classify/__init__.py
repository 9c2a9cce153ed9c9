"""Classification: what each hit *is* (definition, callsite, import, assignment, ...).

In: ``RawMatch`` records and the search's ``Corpus``. Out: ``ClassifyOutcome`` with one
``Classification`` per match (same order) and the run's counters. Knows parsing, nothing
about output.

Open ``engine.py`` first. Tiers: ``heuristic.py`` (tier 1, a line-level guess where no parse
is possible or needed), ``node_tier.py`` (tier 2, the live syntax node), ``lookup.py`` over
``records.py`` (tier 3, per-file records built by ``python_records.py`` / ``rust_records.py``
and kept in the persistent cache, so a repeat search parses nothing). ``pool.py`` runs
``analyze.py`` in worker processes when the work is large enough (``cq/workers.py`` ties their
life to cq's), fed file by file as the search's ``Corpus`` reads them; a long-lived process
keeps its pool, which a later stage may hand a share of pure work (``helper_pool``).
``analyze.py`` parses a file whole or as the slices around its hits (``slices.py``, whose
line scan first finds where the file's strings span lines: ``strings.py``; its
``TopLevel`` also gives the enrichment a hit's top-level statements). ``verdicts.py``: a
file's finished classifications, cached by content hash and hit spans, so
a repeat search over unchanged files (their digests recalled by the ``Corpus``) needs neither
records nor files.
"""

from cq.classify.engine import ClassifyOutcome, classify_all
from cq.classify.pool import helper_pool
from cq.classify.slices import TopLevel

__all__ = ["ClassifyOutcome", "TopLevel", "classify_all", "helper_pool"]
