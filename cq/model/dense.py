"""What the dense signal hands the index fusion: the embedding order of a question's first
files and of their code units (``cq/embed`` computes it, ``cq/index/dense.py`` fuses it)."""

from __future__ import annotations

from collections.abc import Callable

import msgspec


class DenseRanks(msgspec.Struct, frozen=True, kw_only=True):
    """Files by their best unit's cosine with the question, best first; units (``(path,
    qualname, kind, line)``) by their own cosine, best first."""

    files: list[str]
    units: list[tuple[str, str, str, int]]


# Ranks a search's first fused files (their paths, best first) by the embeddings; None when
# nothing is stored for them.
DenseRanker = Callable[[list[str]], DenseRanks | None]
