"""Classification: what each hit *is* (definition, callsite, import, ...).

In: ``RawMatch`` records and the search root. Out: one ``Classification`` per match, in order.
Knows parsing, nothing about output. Open ``classify_all`` below first.
"""

from __future__ import annotations

from pathlib import Path

from cq.model import Classification, RawMatch


def classify_all(root: Path, matches: tuple[RawMatch, ...]) -> list[Classification]:
    """One classification per match, same order."""
    del root
    return [Classification() for _ in matches]
