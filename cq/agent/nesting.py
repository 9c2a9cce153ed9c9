"""How deep a JSON or TOML text nests, measured before a parser sees it.

Python's ``json`` and ``tomllib`` recurse once per nested array or object: a config file
nested 200,000 deep is a ``RecursionError`` out of either. The installer reads config files
someone else may have written, so it counts the brackets first (outside strings and comments)
and leaves a file deeper than ``MAX_DEPTH`` alone like one that does not parse.
"""

from __future__ import annotations

import re

# hand-set: agent configs nest a handful of levels; the parsers' limit is near 1,000 frames
MAX_DEPTH = 100

_JSON_SKIP = re.compile(r'"(?:[^"\\]++|\\.)*+"')
_TOML_SKIP = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]++|\\.)*+"|\'[^\'\n]*+\'|#[^\n]*+'
)
_BRACKETS = re.compile(r"[\[\]{}]")


def too_deep(text: str, *, toml: bool = False) -> str | None:
    """Why ``text`` is not to be parsed (nested deeper than ``MAX_DEPTH``), None if it is not."""
    bare = (_TOML_SKIP if toml else _JSON_SKIP).sub("", text)
    depth = 0
    for bracket in _BRACKETS.finditer(bare):
        if bracket.group() in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return f"nested deeper than {MAX_DEPTH} levels"
        else:
            depth = max(depth - 1, 0)
    return None
