"""Relevant Functions' first places by how much of the question each one's own text says.

The fused unit order (``fuse.fused_units``) is a rank fusion of the index's units, rg's
scopes and their files' places: its first ten often score within a few percent of each other,
and ranks alone decide which is first. A question's right answer was mostly among them but
not first: on 48 one-line questions written blind on tuning-set trees
(``bench/data/questions-blind.jsonl``) the first Relevant Function was right for 12, one of the
first five for 36. Reading each of the first candidates' own text (names, signature,
docstring, body) and counting which of the asked words it holds, each word weighted by how
few of the candidates hold it, tells the function that does what the question says from
its neighbours that share the file's vocabulary (``MinSaver._trigger`` from
``ModelSaver.__init__``; ``_correct_ambiguous_vr_element`` from its wrapper).

Words are compared as ``cq.rewrite.stem`` stems of ``split_words`` subwords, so
"rendered" meets ``render`` and "checkpoints" ``checkpoint``. Numbers: ``IndexTuning``'s
``coverage_units`` and ``coverage_weight`` (their notes have the figures).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from cq.index.fuse import UnitVote
from cq.index.words import split_words
from cq.rewrite import stem


def unit_words(text: str) -> frozenset[str]:
    """The stems of every identifier, subword and word of a unit's text."""
    return frozenset(stem(w) for w in split_words(text).split())


def coverage(words: Mapping[str, float], held: Sequence[frozenset[str] | None]) -> list[float]:
    """Each candidate's share (0-1) of the asked words' weight that its text holds.

    A word weighs its asked weight times ``log((n + 1) / (df + 0.5))`` over the ``n``
    candidates, ``df`` of which hold it: a word every candidate says (the file's own subject)
    counts little, one only the answer says counts most. Words no candidate holds are left
    out of the total; a candidate whose text could not be read (``None``) covers nothing."""
    asked: dict[str, float] = {}
    for word, weight in words.items():
        key = stem(word)
        asked[key] = max(asked.get(key, 0.0), weight)
    n = len(held)
    df = {w: sum(1 for h in held if h is not None and w in h) for w in asked}
    weight = {w: asked[w] * math.log((n + 1) / (df[w] + 0.5)) for w in asked if df[w]}
    total = sum(weight.values())
    if total <= 0:
        return [0.0] * n
    return [sum(v for w, v in weight.items() if w in h) / total if h else 0.0 for h in held]


def by_coverage(
    units: list[tuple[UnitVote, list[UnitVote]]],
    words: Mapping[str, float],
    read: Callable[[UnitVote], frozenset[str] | None],
    top: int,
    weight: float,
) -> list[tuple[UnitVote, list[UnitVote]]]:
    """``units`` (each with its namesakes) with the first ``top`` reordered by their fused
    score times ``1 + weight * coverage``; the rest keep their places. ``read`` gives a
    unit's words (``unit_words``), None when its text cannot be found."""
    if top < 2 or weight <= 0 or not words:
        return units
    head = units[:top]
    shares = coverage(words, [read(vote) for vote, _ in head])
    scores = [
        vote.fused * (1.0 + weight * share) for (vote, _), share in zip(head, shares, strict=True)
    ]
    order = sorted(range(len(head)), key=lambda i: (-scores[i], i))
    return [head[i] for i in order] + units[top:]
