"""A multi-line def/fn header as one line, for lists where a fenced block would be too much
(the report's definition lists, the index's Relevant Functions).

Comments are dropped (they would swallow the rest of the line) and the line breaks inside
brackets collapse, so ``def f(\\n    a: int,  # note\\n) -> X:`` reads ``def f(a: int) -> X:``.
"""

from __future__ import annotations

import io
import re
import textwrap
import tokenize

MAX_WIDTH = 160
_AFTER_OPEN = re.compile(r"([(\[{]) ")
_BEFORE_CLOSE = re.compile(r",? ([)\]}])")


def one_line_header(lines: list[str], language: str) -> str:
    """The def/fn header that ``lines`` start with, on one line: up to the line ending in
    ``:`` in Python, up to the body's ``{`` or a ``;`` in Rust (the body is not part of it);
    all of ``lines`` when no end is found (then cut with an ellipsis)."""
    rust = language == "rust"
    for n, text in enumerate(lines, 1):
        code = (text.split("//")[0] if rust else text.split("#")[0]).rstrip()
        if rust and "{" in code:
            lines = [*lines[: n - 1], code[: code.index("{")].rstrip()]
            break
        end = ";" if rust else ":"
        if code.endswith(end) or text.rstrip().endswith(end):  # "#" may sit in a string
            lines = lines[:n]
            break
    header = textwrap.dedent("\n".join(lines)).strip()
    return one_line_signature(header, language) if header else ""


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
