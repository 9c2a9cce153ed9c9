"""What a query asks for, beyond its names: a question about a function's callers.

"who calls build_graph", "where is it called?", "callers of X", "call sites of X": the answer
is the named function with the calls that resolve to it (``cq/semantic/ranking.py``), not the
code the question's words are about (``cq/assemble/result.py``).
"""

from __future__ import annotations

import re

_CALLERS = re.compile(
    r"\b(?:who|what|where|which)\b.*\bcall(?:s|ed|ing)?\b|\bcallers?\b|\bcall ?sites?\b", re.I
)


def asks_for_callers(query: str) -> bool:
    """Whether the query asks who calls a function."""
    return _CALLERS.search(query) is not None
