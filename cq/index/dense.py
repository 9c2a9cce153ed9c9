"""Fuse the dense signal (``cq.model.DenseRanks``) into a question's fused order.

Reciprocal-rank fusion, as the index's own (``fuse.py``): an item's score is ``1 / (k + its
rank in the fused order) + weight / (k + its rank in the embedding order)``. Only the first
``EmbedTuning.files`` files are reordered (the embeddings were read for them alone); later
files keep their place. Relevant Functions fuse the whole unit list with the embedding order
of the units of those files; a unit only the embeddings found joins as an index unit would.
Pure functions over ranks, shared with bench/studies/embed_fusion.py.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

import msgspec

from cq.index.fuse import RUST_TYPE_KINDS, UnitVote
from cq.index.order import FusedOrder
from cq.model.dense import DenseRanks
from cq.model.embed_tuning import EmbedTuning

K = TypeVar("K", bound=Hashable)


def rrf(order: Sequence[K], dense: Sequence[K], weight: float, k: float) -> list[K]:
    """``order``'s items and ``dense``'s, best fused first (ties: ``order``'s, then
    ``dense``'s)."""
    score: dict[K, float] = {}
    for rank, item in enumerate(order, 1):
        score[item] = score.get(item, 0.0) + 1.0 / (k + rank)
    for rank, item in enumerate(dense, 1):
        score[item] = score.get(item, 0.0) + weight / (k + rank)
    place = {item: i for i, item in enumerate(dict.fromkeys([*order, *dense]))}
    return sorted(score, key=lambda item: (-score[item], place[item]))


def with_dense(order: FusedOrder, dense: DenseRanks, tuning: EmbedTuning) -> FusedOrder:
    """``order`` with its first files and its units reordered by the embeddings."""
    head, rest = order.files[: tuning.files], order.files[tuning.files :]
    by_file = {v.file: v for v in head}
    known = [f for f in dense.files if f in by_file]
    files = [by_file[f] for f in rrf(list(by_file), known, tuning.weight, tuning.k)]
    units = {(v.file, v.qualname): (v, more) for v, more in order.units}
    for path, qualname, kind, line in dense.units:
        if (path, qualname) not in units and kind not in ("module", "class", *RUST_TYPE_KINDS):
            units[(path, qualname)] = (
                UnitVote(file=path, qualname=qualname, line=line, kind=kind),
                [],
            )
    ranked = rrf(
        [(v.file, v.qualname) for v, _ in order.units],
        [(p, q) for p, q, _, _ in dense.units],
        tuning.weight,
        tuning.k,
    )
    kept = [units[key] for key in ranked if key in units]
    return msgspec.structs.replace(order, files=[*files, *rest], units=kept)
