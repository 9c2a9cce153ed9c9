"""Result assembly: the shown findings plus the run's facts become a ``SearchResult``.

In: the shown findings in their final order, the ``Tally`` of all findings, candidate
statistics, the ``Question`` and what the report repeats of the request (``Echo``: the
summary's root, the follow-ups' options, the token budget). Out: ``SearchResult`` with
summary and sections (``result.py``; ``sections.py`` and ``followups.py`` build the parts)
and the report's ``ReportPlan`` (``answer.py``: which finding answers and how, so
``cq.report`` only prints). ``fit_answer`` (``budget.py``) delivers a result within a token
budget, for the CLI and the MCP server alike, by dropping whole lowest-ranked findings,
never the one the Answer names (a budget below the header and the Answer is an error naming
the minimum). A name that matched nothing carries the tree's nearest defined names
(``Summary.suggestions``, made by ``cq.rank.suggest``), never an Answer. Computes the
report's content; ``cq.report`` only renders it.
"""

from cq.assemble.budget import Fitted, estimate_tokens, fit_answer, fit_budget
from cq.assemble.result import SearchFacts, assemble_result

__all__ = [
    "Fitted",
    "SearchFacts",
    "assemble_result",
    "estimate_tokens",
    "fit_answer",
    "fit_budget",
]
