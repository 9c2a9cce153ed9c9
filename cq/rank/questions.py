"""What a query asks for, beyond its names: a question about a function's callers.

"who calls build_graph", "where is it called?", "callers of X", "call sites of X": the answer
is the named function with the calls that resolve to it (``cq/semantic/ranking.py``), not the
code the question's words are about (``cq/assemble/result.py``); its callsites score like its
definition (``called_names``), so that they are shown even where nothing resolves them (Rust,
``--no-semantic``).
"""

from __future__ import annotations

from cq.model import Question
from cq.rewrite import understand


def called_names(
    asked: Question | str, names: frozenset[str], subject: str | None = None
) -> frozenset[str]:
    """The function a callers question asks about: the queried ``names`` it writes itself
    ("who calls build_graph": build_graph), not the ones a rewrite guessed, or the ``subject``
    its "it" was read as ("where is it called?" after ``--follow-up``); empty for other
    queries. ``asked``: the search's Question, or the text of a finished search's summary
    (the token budget's and the report's, which keep only the text), read as one."""
    question = understand(asked) if isinstance(asked, str) else asked
    if not question.callers:
        return frozenset()
    return (names & question.written) | ({subject} if subject else set())
