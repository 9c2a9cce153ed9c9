"""Markdown quoting that never alters text: fences and code spans sized to their content."""

from __future__ import annotations

import re

import msgspec

from cq.model import LineWindow
from cq.model.options import SEARCH_OPTIONS

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


def option(flag: str, value: str = "", *, tool: bool) -> str:
    """A search option as the report's reader writes it: the command line's ``--flag value``,
    or, in a report an MCP tool call asked for, the tool's own argument (``name: value``; a
    switch ``name: true``), named as the tool's input schema names it."""
    if not tool:
        return f"{flag} {value}".rstrip()
    return f"{_ARGUMENTS[flag]}: {value or 'true'}"


def option_name(flag: str, *, tool: bool) -> str:
    """The option's name alone: the flag, or the tool's argument."""
    return _ARGUMENTS[flag] if tool else flag


_ARGUMENTS = {
    flag: option.mcp_name or option.name
    for option in SEARCH_OPTIONS
    if option.mcp
    for flag in option.flags
}
