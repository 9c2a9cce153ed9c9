"""What rg found: one ``RawMatch`` per submatch, plus per-partition statistics."""

from __future__ import annotations

from typing import Literal

import msgspec

Language = Literal["python", "rust"]
CapHit = Literal["none", "files", "matches_per_file", "total_matches"]


class LineWindow(msgspec.Struct, frozen=True):
    """How a long line was shortened: ``line_text`` holds only its characters
    ``[start, end)`` of ``length``, so ``line_text[col - start : end_col - start] == text``."""

    start: int
    end: int
    length: int


class ContextLine(msgspec.Struct, frozen=True):
    """A line near a shown hit (rg's -A/-B/-C): its number and text, no terminator; a long
    line is cut to the report's window with "…" at the cut."""

    line: int
    text: str


class RawMatch(msgspec.Struct, frozen=True):
    """One submatch. ``col``/``end_col`` count characters; ``byte_*`` count bytes of the file
    as rg searched it (after a byte order mark). ``line_text[col:end_col] == text``, unless
    ``line_window`` says the line was shortened (then relative to the window)."""

    file: str  # relative to the search root, POSIX separators
    line: int  # 1-based
    col: int  # 0-based character column
    end_col: int
    byte_start: int  # absolute byte offset of the match in the file
    byte_end: int
    text: str
    line_text: str  # without the line terminator
    language: Language
    patterns: tuple[int, ...] = ()  # indexes into the request's pattern list
    line_window: LineWindow | msgspec.UnsetType = msgspec.UNSET  # set for shortened lines


class SearchStats(msgspec.Struct, frozen=True, kw_only=True):
    """Counters of one language partition (or of the whole rg run).

    Deterministic for identical runs; rg's wall time is in ``RunInfo.timings_ms["candidates"]``.
    """

    scanned_files: int | None = None  # None: rg stopped before it could say
    matched_files: int = 0
    total_matches: int = 0
    truncated: bool = False
    timed_out: bool = False
    caps_hit: CapHit = "none"
    dropped_by_scope: int = 0
