"""Fuse rg's file order with the index's: weighted reciprocal-rank fusion.

Pure functions over ranks, shared by the pipeline (``apply.py``) and the tuning bench
(bench/index_fusion.py), so the bench measures exactly what a search does.

The index's own file order fuses its two granularities the same way: a file's rank among file
documents and the rank of its best unit among unit documents.
"""

from __future__ import annotations

import msgspec

from cq.index.query import IndexHits


class Fusion(msgspec.Struct, frozen=True, kw_only=True):
    """The fusion's numbers; defaults from bench/index_fusion.py (figures in ``DEFAULT``)."""

    k: float = 5.0  # RRF constant: small k trusts the first ranks most
    w_rg: float = 1.0
    w_index: float = 1.0
    k_units: float = 5.0  # inside the index: file documents vs best units
    w_units: float = 1.0


DEFAULT = Fusion()


class FileVote(msgspec.Struct, frozen=True, kw_only=True):
    """One file's place in the fused order, with both signals (``--explain`` shows them)."""

    file: str
    fused: float
    rank_rg: int = 0  # 0: not among rg's files
    rank_index: int = 0  # 0: not among the index's files


def index_file_order(hits: IndexHits, fusion: Fusion = DEFAULT) -> list[str]:
    """Files by fused rank of their file document and their best unit."""
    scores: dict[str, float] = {}
    for rank, hit in enumerate(hits.files, 1):
        scores[hit.path] = scores.get(hit.path, 0.0) + 1.0 / (fusion.k_units + rank)
    for rank, path in enumerate(dict.fromkeys(u.path for u in hits.units), 1):
        scores[path] = scores.get(path, 0.0) + fusion.w_units / (fusion.k_units + rank)
    return sorted(scores, key=lambda p: (-scores[p], p))


def fused_files(
    rg_files: list[str], index_files: list[str], fusion: Fusion = DEFAULT
) -> list[FileVote]:
    """Every file of either order, best fused first (ties: rg's order, then path)."""
    rank_rg = {f: i for i, f in enumerate(rg_files, 1)}
    rank_ix = {f: i for i, f in enumerate(index_files, 1)}
    votes = []
    for f in dict.fromkeys([*rg_files, *index_files]):
        r, x = rank_rg.get(f, 0), rank_ix.get(f, 0)
        score = (fusion.w_rg / (fusion.k + r) if r else 0.0) + (
            fusion.w_index / (fusion.k + x) if x else 0.0
        )
        votes.append(FileVote(file=f, fused=round(score, 6), rank_rg=r, rank_index=x))
    return sorted(votes, key=lambda v: (-v.fused, v.rank_rg or 1 << 30, v.file))
