"""Records of a file parsed as slices, and their cache key: the file's hash and its hits.

A sliced parse covers only the statements around one search's hits, so its records answer
for those hits and no others. They are cached under the file's content hash plus a hash of
the hit spans: a repeated search finds them with one lookup and neither scans nor parses; a
search with other hits in the same file plans and parses its own slices.
"""

from __future__ import annotations

import hashlib
from array import array
from pathlib import Path

import msgspec

from cq.classify.analyze import SLICE_FAILED, FileAnalysis, FileTask
from cq.classify.records import FileRecords, StoredRecords
from cq.classify.slices import SlicePlan


class SlicedRecords(msgspec.Struct, frozen=True, array_like=True):
    """Records of each slice, and for each hit (in order) the index of its slice."""

    owners: list[int]
    pieces: list[StoredRecords]


class Pieces:
    """``SlicedRecords`` loaded for lookups."""

    __slots__ = ("owners", "records")

    def __init__(self, stored: SlicedRecords) -> None:
        self.owners = stored.owners
        self.records = [FileRecords.from_stored(p) for p in stored.pieces]


def hits_key(digest: str, spans: list[tuple[int, int]]) -> str:
    """Cache key of one file's sliced records for exactly these hit spans."""
    flat = array("q", [offset for span in spans for offset in span]).tobytes()
    return f"{digest}:{hashlib.blake2b(flat, digest_size=8).hexdigest()}"


def slice_tasks(root: Path, plans: dict[str, SlicePlan]) -> list[FileTask]:
    """One task per slice, file by file."""
    return [
        FileTask(str(root / rel), rel, "python", slice=piece)
        for rel, plan in plans.items()
        for piece in plan.slices
    ]


def assemble(plans: dict[str, SlicePlan], analyses: list[FileAnalysis]) -> dict[str, SlicedRecords]:
    """Group the analyses of ``slice_tasks(plans)`` by file; a file with a slice that did
    not parse is left out (the scan misjudged a boundary: parse it whole)."""
    out: dict[str, SlicedRecords] = {}
    at = 0
    for rel, plan in plans.items():
        mine = analyses[at : at + len(plan.slices)]
        at += len(plan.slices)
        if all(a.records.reason != SLICE_FAILED for a in mine):
            out[rel] = SlicedRecords(plan.owners, [a.records for a in mine])
    return out
