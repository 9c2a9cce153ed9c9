"""Shared by the Python and Rust scanners: a container's own text is its span minus its
children's spans, and line numbers come from one running newline count."""

from __future__ import annotations


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
