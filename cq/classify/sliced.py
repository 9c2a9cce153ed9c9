"""Records of a file parsed as slices, and their cache key: the file's hash and its hits.

A sliced parse covers only the statements around one search's hits, so its records answer
for those hits and no others. They are cached under the file's content hash plus a hash of
the hit spans: a repeated search finds them with one lookup and neither scans nor parses; a
search with other hits in the same file plans and parses its own slices.
"""

from __future__ import annotations

import hashlib
from array import array

from cq.classify.analyze import SlicedRecords
from cq.classify.records import FileRecords


class Pieces:
    """``SlicedRecords`` loaded for lookups: the records, and each hit's shift into them."""

    __slots__ = ("records", "shifts")

    def __init__(self, stored: SlicedRecords) -> None:
        self.records = FileRecords.from_stored(stored.records)
        self.shifts = stored.shifts


def hits_key(digest: str, spans: list[tuple[int, int]]) -> str:
    """Cache key of one file's sliced records for exactly these hit spans."""
    flat = array("q", [offset for span in spans for offset in span]).tobytes()
    return f"{digest}:{hashlib.blake2b(flat, digest_size=8).hexdigest()}"
