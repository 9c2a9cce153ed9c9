"""Fuse the dense signal (``cq.model.DenseRanks``) into a question's fused order.

Reciprocal-rank fusion, as the index's own (``fuse.py``): an item's score is ``1 / (k + its
rank in the fused order) + weight / (k + its rank in the embedding order)``. Only the first
``EmbedTuning.files`` files are reordered (the embeddings were read for them alone); later
files keep their place. The Relevant Functions, in their final order (``functions.py``), are
fused with the embedding order of the units of those files; a unit only the embeddings found
joins them.
Pure functions over ranks, shared with bench/studies/embed_fusion.py.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

import msgspec

from cq.index.functions import Ranked, Scored
from cq.index.fuse import RUST_TYPE_KINDS, UnitVote
from cq.index.order import FusedOrder
from cq.model.dense import DenseRanks
from cq.model.embed_tuning import EmbedTuning

K = TypeVar("K", bound=Hashable)
CONTAINERS = frozenset({"module", "class", *RUST_TYPE_KINDS})  # not functions (fuse._container)


def rrf_scores(order: Sequence[K], dense: Sequence[K], weight: float, k: float) -> dict[K, float]:
    """``order``'s items and ``dense``'s with their fused score, best first (ties:
    ``order``'s, then ``dense``'s)."""
    score: dict[K, float] = {}
    for rank, item in enumerate(order, 1):
        score[item] = score.get(item, 0.0) + 1.0 / (k + rank)
    for rank, item in enumerate(dense, 1):
        score[item] = score.get(item, 0.0) + weight / (k + rank)
    place = {item: i for i, item in enumerate(dict.fromkeys([*order, *dense]))}
    return {i: round(score[i], 6) for i in sorted(score, key=lambda i: (-score[i], place[i]))}


def rrf(order: Sequence[K], dense: Sequence[K], weight: float, k: float) -> list[K]:
    """The items of ``rrf_scores``, best first."""
    return list(rrf_scores(order, dense, weight, k))


def with_dense(order: FusedOrder, dense: DenseRanks, tuning: EmbedTuning) -> FusedOrder:
    """``order`` with its first files reordered by the embeddings; their ``fused`` score is
    then the fusion's (the rest's stay as they were)."""
    head, rest = order.files[: tuning.files], order.files[tuning.files :]
    by_file = {v.file: v for v in head}
    known = [f for f in dense.files if f in by_file]
    fused = rrf_scores(list(by_file), known, tuning.weight, tuning.k)
    files = [msgspec.structs.replace(by_file[f], fused=s) for f, s in fused.items()]
    return msgspec.structs.replace(order, files=[*files, *rest])


def dense_listed(ranked: Sequence[Ranked], dense: DenseRanks, tuning: EmbedTuning) -> list[Ranked]:
    """The Relevant Functions' candidates in their final order (``ranked``, best first) fused
    with the embedding order of their files' units, as bench/studies/embed_fusion.py measured
    it on cq's list: each one's score is then the fusion's, and a function only the
    embeddings found joins them (no other signal: it is never the Answer)."""
    by_key = {(r.vote.file, r.vote.qualname): r for r in ranked}
    for path, qualname, kind, line in dense.units:
        if (path, qualname) not in by_key and kind not in CONTAINERS:
            vote = UnitVote(file=path, qualname=qualname, line=line, kind=kind)
            scored = Scored(at=-1, score=0.0, signals={}, evidence=())  # on no list of cq's
            by_key[(path, qualname)] = Ranked(vote=vote, namesakes=[], scored=scored)
    scores = rrf_scores(
        list(by_key)[: len(ranked)],
        [(p, q) for p, q, _, _ in dense.units],
        tuning.weight,
        tuning.k,
    )
    return [
        msgspec.structs.replace(
            by_key[key], scored=msgspec.structs.replace(by_key[key].scored, score=s)
        )
        for key, s in scores.items()
        if key in by_key
    ]
