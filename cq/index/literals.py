"""A unit's source text without its string literals, for the words that say what it does.

A string literal is what a function tells its user (an error's message, a log line, a
format), not what it does: a how-question's shares of the question count a function's code
without them (``functions.asks_code`` says when). Its names, comments and docstring still
count, and an f-string's holes, which are code.

A lexer of one pass over quotes and comments, not a parser: a unit's text is a slice of a
file, and a slice that ends inside a string loses only its own tail.
"""

from __future__ import annotations

import re

# Python: a comment (kept), then any string with its prefix (``rb``, ``f``): triple-quoted
# ones may span lines, one-quote ones end at their line.
_PYTHON = re.compile(
    r"""(?P<comment>\#[^\n]*)"""
    r"""|(?P<prefix>\b[rRbBuUfF]{1,2})?(?P<body>'''[\s\S]*?(?:'''|\Z)|\"\"\"[\s\S]*?(?:\"\"\"|\Z)"""
    r"""|'(?:\\.|[^'\\\n])*(?:'|$)|"(?:\\.|[^"\\\n])*(?:"|$))""",
    re.MULTILINE,
)
# Rust: comments (kept), raw strings (``r#"..."#``), strings (which span lines) and char
# literals (so ``'"'`` opens no string; a lifetime ``'a`` has no closing quote and stays).
_RUST = re.compile(
    r"""(?P<comment>//[^\n]*|/\*[\s\S]*?(?:\*/|\Z))"""
    r"""|(?P<prefix>\bb?r)(?P<hashes>\#*)"[\s\S]*?(?:"(?P=hashes)|\Z)"""
    r"""|b?"(?:\\[\s\S]|[^"\\])*(?:"|\Z)"""
    r"""|b?'(?:\\[^'\n]{1,10}|[^'\\\n])'""",
)
# an f-string's holes: the code it formats (``{self.path}``), not its doubled ``{{``
_HOLE = re.compile(r"(?<!\{)\{([^{}]+)\}")


def without_strings(text: str, *, rust: bool) -> str:
    """``text`` with each string literal replaced by a space (a Python f-string by the code
    in its holes); comments and code kept."""
    return (_RUST if rust else _PYTHON).sub(_kept, text)


def _kept(m: re.Match[str]) -> str:
    if m.group("comment"):
        return m.group(0)
    prefix = (m.group("prefix") or "").lower()
    if "f" in prefix and m.groupdict().get("body"):
        return " " + " ".join(_HOLE.findall(m.group("body"))) + " "
    return " "
