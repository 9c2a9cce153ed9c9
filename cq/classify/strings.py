"""Where a Python file's strings span lines, found without a parse: the one pass the slices'
line scan needs (``slices.py``) before it takes a line at column 0 for a statement's start
(``def`` at column 0 inside a triple-quoted string starts none).

``_MULTILINE`` matched over a whole file defines the spans; ``multiline_strings`` gives the
same ones faster (``tests/test_scan_shortcuts.py`` checks them against it).
"""

from __future__ import annotations

import re

# One match per string that spans lines, everything before it skipped in the same match
# (comments, one-line strings, escapes) without backtracking; a stray quote or the end of
# the file also ends a match, so every match makes progress.
_ONE_LINE = rb'"(?!"")[^"\\\n]*(?:\\[^\n][^"\\\n]*)*"' rb"|'(?!'')[^'\\\n]*(?:\\[^\n][^'\\\n]*)*'"
_TRIPLE = (
    rb'"""[^"\\]*+(?:(?:\\.|"(?!""))[^"\\]*+)*+"""'
    rb"|'''[^'\\]*+(?:(?:\\.|'(?!''))[^'\\]*+)*+'''"
)
_CONTINUED = rb'"[^"\\\n]*(?:\\.[^"\\\n]*)*"' rb"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'"
_MULTILINE = re.compile(
    rb"(?>(?:[^\"'#\\]++|\\.|#[^\n]*+|" + _ONE_LINE + rb")*+)"
    rb"(?:(?P<string>" + _TRIPLE + rb"|" + _CONTINUED + rb")|[\"'\\]|\Z)",
    re.DOTALL,
)
_SPANNING = (b'"""', b"'''", b"\\\n")  # what a string that spans lines holds
# ``_MULTILINE`` up to a triple quote's opening: its body is skipped with ``bytes.find``
# (``_triple_end``; docstrings are most of the bytes the scan passes over).
_OPENING = re.compile(
    rb"(?>(?:[^\"'#\\]++|\\.|#[^\n]*+|" + _ONE_LINE + rb")*+)"
    rb"(?:(?P<triple>\"\"\"|''')|(?P<string>" + _CONTINUED + rb")|[\"'\\]|\Z)",
    re.DOTALL,
)


def multiline_strings(data: bytes) -> list[tuple[int, int]]:
    """The spans of the strings that span lines, as ``_MULTILINE``'s matches over the whole
    file give them, from the lines that may start one only: a string spans lines with a
    triple quote or a backslash before a newline, and every other line starts in code (no
    comment or one-line string goes past its line), so the matches start on the lines that
    hold one of those (``bytes.find`` skips the rest, most of a file, at memory speed, and
    the bodies of triple-quoted strings: ``_triple_end``)."""
    spans: list[tuple[int, int]] = []
    found = [data.find(mark) for mark in _SPANNING]
    at = 0
    while True:
        for n, mark in enumerate(_SPANNING):
            if 0 <= found[n] < at:
                found[n] = data.find(mark, at)
        ahead = [pos for pos in found if pos >= 0]
        if not ahead:
            return spans
        start = max(at, data.rfind(b"\n", 0, min(ahead)) + 1)
        match = _OPENING.match(data, start)
        if match is None or match.end() == start:  # the end of the file
            return spans
        at = match.end()
        if match.start("triple") >= 0:
            end = _triple_end(data, at, match["triple"])
            if end is None:  # never closed: as ``_MULTILINE`` reads it
                match = _MULTILINE.match(data, start)
                if match is None or match.end() == start:
                    return spans
                at = match.end()
            else:
                spans.append((match.start("triple"), end))
                at = end
                continue
        if match.start("string") >= 0:
            spans.append(match.span("string"))


def _triple_end(data: bytes, body: int, quote: bytes) -> int | None:
    """The end (past its closing quotes) of the triple-quoted string whose body starts at
    ``body``: the first ``quote`` there not escaped by an odd run of backslashes, where
    ``_TRIPLE`` ends it; None when it is never closed."""
    pos = body
    while (close := data.find(quote, pos)) >= 0:
        run = close
        while data[run - 1] == 92:  # backslashes; the opening quote stops the walk
            run -= 1
        if (close - run) % 2 == 0:
            return close + 3
        pos = close + 1
    return None
