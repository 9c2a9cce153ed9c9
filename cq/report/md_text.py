"""Markdown quoting that never alters text: fences and code spans sized to their content."""

from __future__ import annotations

import re

import msgspec

from cq.model import LineWindow

_BACKTICK_RUNS = re.compile(r"`+")


def longest_run(text: str, pattern: re.Pattern[str] = _BACKTICK_RUNS) -> int:
    return max((len(m.group(0)) for m in pattern.finditer(text)), default=0)


def fence(lines: list[str], language: str) -> list[str]:
    """A fenced block holding ``lines`` byte for byte: the fence outlasts any backtick run."""
    body = "\n".join(lines)
    ticks = "`" * max(3, longest_run(body) + 1)
    return [f"{ticks}{language}", *lines, ticks]


def code(text: str) -> str:
    """An inline code span for a one-line text (paths, names, commands), backticks included."""
    ticks = "`" * (longest_run(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def shown_line(line_text: str, window: LineWindow | msgspec.UnsetType) -> str:
    """A finding's line; a window of a long line gets "…" where the line goes on."""
    if isinstance(window, LineWindow):
        before = "…" if window.start > 0 else ""
        after = "…" if window.end < window.length else ""
        return before + line_text + after
    return line_text
