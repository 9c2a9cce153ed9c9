"""What a query asks for, beyond its names: a question about a function's callers.

"who calls build_graph", "where is it called?", "callers of X", "call sites of X": the answer
is the named function with the calls that resolve to it (``cq/semantic/ranking.py``), not the
code the question's words are about (``cq/assemble/result.py``); its callsites score like its
definition (``called_names``), so that they are shown even where nothing resolves them (Rust,
``--no-semantic``).
"""

from __future__ import annotations

from cq.model import Question


def called_names(
    question: Question, names: frozenset[str], subject: str | None = None
) -> frozenset[str]:
    """The function a callers question asks about: the queried ``names`` it writes itself
    ("who calls build_graph": build_graph), not the ones a rewrite guessed, or the ``subject``
    its "it" was read as ("where is it called?" after ``--follow-up``); empty for other
    queries."""
    if not question.callers:
        return frozenset()
    return (names & question.written) | ({subject} if subject else set())
