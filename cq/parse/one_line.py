"""A multi-line def/fn header as one line, for lists where a fenced block would be too much
(the report's definition lists, the index's Relevant Functions).

Comments are dropped (they would swallow the rest of the line) and the line breaks inside
brackets collapse, so ``def f(\\n    a: int,  # note\\n) -> X:`` reads ``def f(a: int) -> X:``.
"""

from __future__ import annotations

import io
import re
import tokenize

MAX_WIDTH = 160
_AFTER_OPEN = re.compile(r"([(\[{]) ")
_BEFORE_CLOSE = re.compile(r",? ([)\]}])")


def one_line_signature(signature: str, language: str) -> str:
    """``signature`` on one line, cut to ``MAX_WIDTH`` characters with an ellipsis."""
    lines = _without_comments(signature.split("\n"), language)
    if lines is None:
        return _clip(signature.split("\n")[0].rstrip() + " …")
    text = " ".join(part.strip() for part in lines if part.strip()).rstrip(",")
    return _clip(_BEFORE_CLOSE.sub(r"\1", _AFTER_OPEN.sub(r"\1", text)))


def _without_comments(lines: list[str], language: str) -> list[str] | None:
    """The lines with their comments cut off, or None when Python's tokenizer refuses them."""
    if language != "python":
        return [line.split("//")[0] for line in lines]  # a Rust header holds no "//" string
    try:
        starts = [
            token.start
            for token in tokenize.generate_tokens(io.StringIO("\n".join(lines)).readline)
            if token.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError):
        return None
    cut = list(lines)
    for row, col in starts:
        cut[row - 1] = cut[row - 1][:col]
    return cut


def _clip(text: str) -> str:
    return text if len(text) <= MAX_WIDTH else text[: MAX_WIDTH - 1] + "…"
