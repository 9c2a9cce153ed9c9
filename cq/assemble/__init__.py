"""Result assembly: ranked findings plus the run's facts become a ``SearchResult``.

In: ranked findings, candidate statistics, the request. Out: ``SearchResult`` with summary and
sections. Computes the report's content; ``cq.report`` only renders it.
"""

from cq.assemble.result import SearchFacts, assemble_result

__all__ = ["SearchFacts", "assemble_result"]
