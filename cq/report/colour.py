"""Colour for the markdown report at a terminal (``--color``): headings, paths and the Answer
stand out, modestly; code in fences and everything else is left as written. Applied to the
finished text, so the report (and its token budget) is the same with colour or without.
JSON is never coloured."""

from __future__ import annotations

import re

_BOLD, _GREEN, _MAGENTA, _RESET = "\x1b[1m", "\x1b[32m", "\x1b[35m", "\x1b[0m"
_FENCE = re.compile(r"^(`{3,})")
# Code spans holding a place (``path:line:col``, ``path:line``) or a Python or Rust file's
# path, in rg's colour for paths
_PLACE = re.compile(r"`([^`\s]+(?::\d+(?::\d+)?|\.pyi?|\.rs))`")
_ANSWER = "**Answer:**"


def colour_markdown(text: str) -> str:
    """``text`` with ANSI colours outside code fences."""
    out = []
    closing: str | None = None  # the fence that ends the code block we are in
    for line in text.split("\n"):
        if closing is not None:
            closing = None if line == closing else closing
            out.append(line)
            continue
        opened = _FENCE.match(line)
        if opened:
            closing = opened.group(1)
            out.append(line)
            continue
        out.append(_coloured(line))
    return "\n".join(out)


def colour_path(path: str) -> str:
    """A path in rg's colour for paths (``-l``, ``-c`` print them too)."""
    return f"{_MAGENTA}{path}{_RESET}"


def _coloured(line: str) -> str:
    if line.startswith("#"):
        return f"{_BOLD}{line}{_RESET}"
    line = _PLACE.sub(lambda m: f"`{colour_path(m.group(1))}`", line)
    if line.startswith(_ANSWER):
        line = f"{_BOLD}{_GREEN}{_ANSWER}{_RESET}{line[len(_ANSWER) :]}"
    return line
