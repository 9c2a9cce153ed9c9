"""Where each submatch of one rg line sits: line, columns, text and the line as shown.

rg's lines end at LF only; cq's lines also end at a lone CR (as in Python, tree-sitter after
``searched_bytes`` and editors), so an rg line holding CRs is cut into several. Columns count
characters of the line decoded with U+FFFD for invalid bytes, decoded in pieces cut at every
match boundary so that ``line_text[col:end_col] == text`` holds for any bytes a match covers.
The line number of a match after a lone CR comes from ``CrLines``, which asks the search's
``Corpus`` for such a file (rare) to count them: the one read every later stage shares. A
line over ``report.long_line`` characters is shown as a window around the match and says so
in ``window`` (see ``LineWindow``).
"""

from __future__ import annotations

import re
from bisect import bisect_left

import msgspec

from cq.model import Language, LineWindow, RawMatch
from cq.model.tuning import ReportTuning
from cq.parse import Corpus

_LF = re.compile(rb"\n")
_CR = re.compile(rb"\r")


class Placed(msgspec.Struct, frozen=True):
    """One submatch placed in its line; ``row`` counts lone CRs before it in the rg line."""

    row: int
    col: int
    end_col: int
    start: int  # byte offsets within the rg line
    end: int
    text: str
    line_text: str
    window: LineWindow | msgspec.UnsetType = msgspec.UNSET


def place(raw_line: bytes, spans: list[tuple[int, int]], t: ReportTuning) -> list[Placed]:
    """Each ``(start, end)`` byte span of ``raw_line`` (no terminator), placed, in order; a
    span that runs into the terminator (``\\s`` matches the CR of a CRLF) ends at the line."""
    size = len(raw_line)
    if spans and spans[-1][1] > size:  # rg gives them in order: only the last can run over
        spans = [(min(start, size), min(end, size)) for start, end in spans]
    if size <= t.long_line and raw_line.isascii() and b"\r" not in raw_line:
        text = raw_line.decode("ascii")  # most lines: bytes are columns
        return [Placed(0, start, end, start, end, text[start:end], text) for start, end in spans]
    if b"\r" not in raw_line:
        return _in_line(raw_line, 0, 0, spans, t)
    cuts = [m.start() for m in _CR.finditer(raw_line)]  # lone CRs end lines
    by_row: dict[int, list[tuple[int, int]]] = {}
    order: list[tuple[int, int]] = []  # (row, index within the row) of each span
    for start, end in spans:
        while start < end and raw_line[start] == 13:
            start += 1  # a match never starts on a line end
        row = bisect_left(cuts, start)  # CRs before the match
        line_end = cuts[row] if row < len(cuts) else len(raw_line)
        order.append((row, len(by_row.setdefault(row, []))))
        by_row[row].append((start, min(end, line_end)))  # nor runs past one
    placed: dict[int, list[Placed]] = {}
    for row, row_spans in by_row.items():
        base = cuts[row - 1] + 1 if row else 0
        line_end = cuts[row] if row < len(cuts) else len(raw_line)
        local = [(start - base, end - base) for start, end in row_spans]
        placed[row] = _in_line(raw_line[base:line_end], row, base, local, t)
    return [placed[row][i] for row, i in order]


def _in_line(
    line: bytes, row: int, base: int, spans: list[tuple[int, int]], t: ReportTuning
) -> list[Placed]:
    text, cols = _decode(line, sorted({offset for span in spans for offset in span}))
    out = []
    for start, end in spans:
        col, end_col = cols[start], cols[end]
        shown, window = _shown(text, col, end_col, t)
        out.append(
            Placed(row, col, end_col, base + start, base + end, text[col:end_col], shown, window)
        )
    return out


def _decode(line: bytes, cuts: list[int]) -> tuple[str, dict[int, int]]:
    """The line as text and the character column of each byte offset in ``cuts``."""
    if line.isascii():
        return line.decode("ascii"), {c: c for c in cuts}
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and all(c >= len(line) or line[c] & 0xC0 != 0x80 for c in cuts):
        return text, {c: len(line[:c].decode("utf-8")) for c in cuts}
    parts: list[str] = []
    cols: dict[int, int] = {}
    at = width = 0
    for cut in cuts:  # invalid bytes or a cut inside a character: decode piece by piece
        piece = line[at:cut].decode("utf-8", errors="replace")
        parts.append(piece)
        width += len(piece)
        cols[cut] = width
        at = cut
    parts.append(line[at:].decode("utf-8", errors="replace"))
    return "".join(parts), cols


def _shown(
    text: str, col: int, end_col: int, t: ReportTuning
) -> tuple[str, LineWindow | msgspec.UnsetType]:
    """Generated and minified lines run to megabytes: over ``t.long_line`` characters a
    report shows ``t.window`` of them on each side of the match."""
    if len(text) <= t.long_line:
        return text, msgspec.UNSET
    start = max(0, col - t.window)
    end = min(len(text), end_col + t.window)
    return text[start:end], LineWindow(start=start, end=end, length=len(text))


class CrLines:
    """Line numbers in files with lone CRs, which rg does not count as line ends.

    A file is read (by the search's ``corpus``, so classification and enrichment get the
    same bytes without reading it again) once its first rg line holding a CR arrives; from
    then on each of its lines is numbered by the line ends before it (the corpus's bytes are
    ``searched_bytes``: lone CRs read as LFs), and the matches it already gave are
    renumbered. A file whose lone CRs all sit on lines without a match keeps rg's numbers
    (finding that out would mean reading every matched file).
    """

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.line_ends: dict[str, list[int] | None] = {}

    def line(self, path: str, byte: int) -> int | None:
        """The line holding byte offset ``byte`` of ``path``; None for a file not read."""
        ends = self.line_ends.get(path)
        return None if ends is None else bisect_left(ends, byte) + 1

    def learn(self, path: str, language: Language, earlier: list[RawMatch]) -> None:
        """Read ``path`` and renumber ``earlier``, the matches of it collected so far (the
        tail of the list: rg reports a file's lines together)."""
        if path in self.line_ends:
            return
        source = self.corpus.source(path, language)
        if source is None:  # unreadable, or changed since: later stages drop its hits
            self.line_ends[path] = None
            return
        self.corpus.release(path)  # kept for the stages after, while it fits
        ends = self.line_ends[path] = [m.start() for m in _LF.finditer(source.data)]
        i = len(earlier) - 1
        while i >= 0 and earlier[i].file == path:
            line = bisect_left(ends, earlier[i].byte_start) + 1
            earlier[i] = msgspec.structs.replace(earlier[i], line=line)
            i -= 1
