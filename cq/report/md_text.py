"""Markdown quoting that never alters text: fences and code spans sized to their content."""

from __future__ import annotations

import re

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
