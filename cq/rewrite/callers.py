"""Whether a query asks who calls a function: "who calls build_graph", "where is it called?",
"callers of X", "call sites of X". The rewriter then looks for the named function alone
(``offline.py``); the ranking and the report answer with its calls (``cq.rank.questions``).
"""

from __future__ import annotations

import re

_CALLERS = re.compile(
    r"\b(?:who|what|where|which)\b.*\bcall(?:s|ed|ing)?\b|\bcallers?\b|\bcall ?sites?\b", re.I
)


def asks_for_callers(query: str) -> bool:
    """Whether the query asks who calls a function."""
    return _CALLERS.search(query) is not None


def one_line_callers_question(query: str) -> bool:
    """A question of one line that asks who calls a function: it names what it asks about.
    An issue text saying "where the hook is called twice" in its fourth line is not one
    (8 of the 458 tuning texts match ``asks_for_callers`` somewhere, none in their title)."""
    return "\n" not in query.strip() and asks_for_callers(query)
