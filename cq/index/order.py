"""The fused order of a rewritten search: files and units, fused and read again.

One function, called by a search (``apply.fuse_findings``) and by the bench that replays saved
signals (``bench/studies/index_fusion.py``), so what the bench scores is the order a search reports:
the fusion of rg's file order with the index's (``fuse.py``), the first files and units read
again against the question (``coverage.py``). Reading needs the files' units, which a search
scans from its corpus and the bench from the eval trees: a ``coverage.UnitReader`` over them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import msgspec

from cq.index.coverage import UnitReader, by_coverage, files_by_coverage, with_members
from cq.index.fuse import (
    FileVote,
    UnitVote,
    fused_files,
    fused_units,
    fusion_for,
    index_file_order,
    with_namesakes,
)
from cq.index.manifest import Manifest
from cq.index.query import IndexHits
from cq.model.index_tuning import Fusion, IndexTuning


class FusedOrder(msgspec.Struct, frozen=True, kw_only=True):
    """``files``: the file order a search reports; ``units``: its Relevant Functions, each
    with its namesakes, uncut; ``fusion``: the numbers that fused them."""

    fusion: Fusion
    files: list[FileVote]
    units: list[tuple[UnitVote, list[UnitVote]]]


def fused_order(
    rg_files: list[str],
    rg_scopes: list[tuple[str, str]],
    hits: IndexHits,
    words: Mapping[str, float],
    sizes: Mapping[str, int],
    reader: UnitReader | None,
    numbers: IndexTuning,
    roles: Mapping[str, float],
    *,
    tests_wanted: bool = False,
    named: Callable[[str], bool] | None = None,
) -> FusedOrder:
    """rg's files and scopes (``(path, qualname)`` in rank order) fused with the index's
    ``hits``; ``words`` are the weights the index was asked, ``sizes`` the files' bytes;
    ``named``: the classes (types) the question names, which may be Relevant Functions.
    ``reader`` ``None`` leaves the rereads out: the order as fused, which the bench's
    ``--no-reread`` reports to measure them."""
    fusion = fusion_for(rg_files, hits, numbers)
    index_files = index_file_order(hits, fusion, roles)
    votes = fused_files(
        rg_files,
        index_files,
        fusion,
        hits,
        tests_wanted=tests_wanted,
        roles=roles,
        sizes=sizes,
    )
    ranks = {v.file: i for i, v in enumerate(votes, 1)}  # the units' file ranks, as fused
    least = numbers.coverage_min_words
    units = hits.units
    if reader is not None:
        top, share = numbers.file_coverage_files, numbers.file_coverage_weight
        votes = files_by_coverage(
            votes, words, reader.functions, top, share, least, tests_wanted=tests_wanted
        )
        units = with_members(units, words, reader.members, named)
    voted = with_namesakes(
        fused_units(
            units, rg_scopes, ranks, fusion, tests_wanted=tests_wanted, roles=roles, named=named
        )
    )
    if reader is not None:
        top, share = numbers.coverage_units, numbers.coverage_weight
        voted = by_coverage(voted, words, reader.words, top, share, least)
    return FusedOrder(fusion=fusion, files=votes, units=voted)


def sizes_of(manifest: Manifest, rg_files: list[str], hits: IndexHits) -> dict[str, int]:
    """The bytes of every file either order may rank (the index's manifest), for the Rust
    fusion's file prior (``fuse.file_prior``)."""
    files = [*rg_files, *(h.path for h in (*hits.files, *hits.units))]
    files += [m.path for m in (*hits.named, *hits.defined)]
    return {f: manifest[f].size for f in files if f in manifest}
