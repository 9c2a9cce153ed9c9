"""Shared by the Python and Rust scanners: headers found at line starts, a container's own
text is its span minus its children's spans, and line numbers come from one running newline
count."""

from __future__ import annotations

import re
from collections.abc import Iterator


class LineHeads:
    """A pattern matched where a line starts. It is searched after a newline rather than at
    ``^`` in MULTILINE mode: a leading literal lets the regex engine skip from newline to
    newline instead of trying every position, every unit identical (``python -m
    bench.index_speed``; figures: bench/results/2026-11-29-figures-from-cq.md). The first
    line is matched alone."""

    def __init__(self, at: str) -> None:
        self._first = re.compile(at)
        self._rest = re.compile(r"\n" + at)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """The matches in order; a match's first group starts its line."""
        first = self._first.match(text)
        if first is not None:
            yield first
        yield from self._rest.finditer(text)


def own_text(text: str, start: int, end: int, children: list[tuple[int, int]]) -> str:
    """``text[start:end]`` without the (sorted, disjoint) child spans."""
    if not children:
        return text[start:end]
    parts: list[str] = []
    pos = start
    for child_start, child_end in children:
        parts.append(text[pos:child_start])
        pos = max(pos, child_end)
    parts.append(text[pos:end])
    return "\n".join(parts)


class LineCounter:
    """1-based line of increasing offsets, counting each newline once."""

    def __init__(self, text: str) -> None:
        self.text, self.pos, self.line = text, 0, 1

    def at(self, offset: int) -> int:
        self.line += self.text.count("\n", self.pos, offset)
        self.pos = offset
        return self.line
