"""Typed decoding of ``rg --json`` lines, and the text/byte helpers they need.

rg reports offsets in bytes and sends non-UTF-8 paths and lines as base64 ``bytes`` fields;
``Text.raw()`` always gives bytes, so column arithmetic never treats bytes as text.
"""

from __future__ import annotations

import base64

import msgspec


class Text(msgspec.Struct, frozen=True):
    """rg's ``{"text": ...}`` or ``{"bytes": <base64>}`` value."""

    text: str | None = None
    bytes: str | None = None

    def raw(self) -> bytes:
        if self.text is not None:
            return self.text.encode("utf-8")
        return base64.b64decode(self.bytes or "")

    def display(self) -> str:
        """Readable text: exact for UTF-8, with U+FFFD for undecodable bytes."""
        if self.text is not None:
            return self.text
        return self.raw().decode("utf-8", errors="replace")


class SubMatch(msgspec.Struct, frozen=True):
    """Where a submatch sits in its line (its ``match`` text is the line's bytes there: not
    decoded, as rg sends it for every one of an audit's matches)."""

    start: int
    end: int


class MatchData(msgspec.Struct, frozen=True):
    path: Text
    lines: Text
    line_number: int | None
    absolute_offset: int
    submatches: list[SubMatch]


class SummaryStats(msgspec.Struct, frozen=True):
    searches: int = 0
    searches_with_match: int = 0


class SummaryData(msgspec.Struct, frozen=True):
    stats: SummaryStats


class Begin(msgspec.Struct, frozen=True, tag="begin", tag_field="type"):
    """A file's first event (its path comes again with each match: not decoded here)."""


class Match(msgspec.Struct, frozen=True, tag="match", tag_field="type"):
    data: MatchData


class End(msgspec.Struct, frozen=True, tag="end", tag_field="type"):
    """A file's last event (its path and statistics are not used)."""


class Context(msgspec.Struct, frozen=True, tag="context", tag_field="type"):
    pass


class Summary(msgspec.Struct, frozen=True, tag="summary", tag_field="type"):
    data: SummaryData


Event = Begin | Match | End | Context | Summary

_decoder = msgspec.json.Decoder(Event)


def decode_event(line: bytes) -> Event:
    """Decode one line of rg's JSON stream."""
    return _decoder.decode(line)


def strip_terminator(line: bytes) -> bytes:
    """Drop a trailing LF or CRLF."""
    if line.endswith(b"\r\n"):
        return line[:-2]
    if line.endswith(b"\n"):
        return line[:-1]
    return line
