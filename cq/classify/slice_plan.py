"""What a slice plan is: the slices of one file to parse alone, and which slice holds each hit.

``slices.py`` finds them; ``analyze.py`` parses them (``Slice.source``, one after the other
as one text). Plans travel with their tasks to the pool's workers.
"""

from __future__ import annotations

import msgspec


class Slice(msgspec.Struct, frozen=True, array_like=True):
    """Bytes ``[start, end)`` of a file, parsed after ``header`` (stand-in class and def lines)."""

    start: int
    end: int
    header: bytes = b""
    trailer: bytes = b""

    def source(self, data: bytes) -> bytes:
        """What to parse: the header, the slice, then the trailer (a stand-in for the
        members after it, so a comment at the slice's end stays in the class body, as it
        does in the file)."""
        return self.header + data[self.start : self.end] + self.trailer


class SlicePlan(msgspec.Struct, frozen=True):
    """Distinct slices of one file, and for each hit (in order) the index of its slice."""

    slices: list[Slice]
    owners: list[int]

    def hit_spans(self, hits: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """For each slice, the bytes from its first hit's start to its last hit's end (the
        span its records must answer for)."""
        spans: dict[int, tuple[int, int]] = {}
        for (start, end), owner in zip(hits, self.owners, strict=True):
            low, high = spans.get(owner, (start, end))
            spans[owner] = (min(low, start), max(high, end))
        return [spans[n] for n in range(len(self.slices))]


def joined(slices: list[Slice], owners: list[int]) -> SlicePlan:
    """The plan with slices that follow each other under the same stand-in header joined
    (consecutive statements of one body parse alike together: one parse and one records
    build instead of several, each with its fixed cost)."""
    order = sorted(range(len(slices)), key=lambda n: (slices[n].start, slices[n].end))
    joined: list[Slice] = []
    where = [0] * len(slices)
    for n in order:
        piece = slices[n]
        last = joined[-1] if joined else None
        if last is not None and last.end == piece.start and last.header == piece.header:
            joined[-1] = Slice(last.start, piece.end, last.header, piece.trailer)
        else:
            joined.append(piece)
        where[n] = len(joined) - 1
    return SlicePlan(joined, [where[owner] for owner in owners])
