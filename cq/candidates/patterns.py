"""Query patterns: a query as typed, in its mode (``cq.rewrite.question`` decides it), as
rg regexes.

Every pattern reaches rg as a regex after ``-e``, so one rg run can mix word-bounded
identifiers and fixed-string literals, and a query starting with ``-`` is never a flag.
"""

from __future__ import annotations

import re

from cq.model import Pattern, QueryMode
from cq.rewrite import RECEIVERS, is_identifier_query

_SEPARATOR = re.compile(r"\.|::")
# The ``Pattern.source`` of a dotted query's last name: the user's own query, not a rewrite.
DOTTED_SOURCE = "dotted"


def dotted_parts(query: str) -> tuple[str, ...] | None:
    """The names of a dotted or ``::``-qualified identifier query (``ABCMeta.register``,
    ``pkg.mod.f``, ``Utc::now``), owner first; None for any other query, and for one whose
    owner is ``self`` / ``cls`` / ``Self`` / ``super`` / ``crate`` (no class to look in), but
    ``crate::Name``: the crate root's module, whose item is defined at some module's top."""
    text = query.strip()
    if not is_identifier_query(text):
        return None
    parts = tuple(_SEPARATOR.split(text))
    if len(parts) < 2 or (parts[-2] in RECEIVERS and text != f"crate::{parts[-1]}"):
        return None
    return parts


def patterns_for_query(query: str, mode: QueryMode) -> tuple[Pattern, ...]:
    """The user's own query as a pattern in the given mode; a dotted identifier also searches
    its last name word-bounded (``source="dotted"``): ``ABCMeta.register`` is written so
    nowhere, its definition is ``def register`` inside the class and its uses ``x.register(``,
    which the ranking sorts by what they resolve to (``cq.rank.dotted``)."""
    text = query.strip() if mode == "identifier" else query
    own = Pattern(text=text, kind=mode)
    parts = dotted_parts(text) if mode == "identifier" else None
    if parts is None:
        return (own,)
    return (own, Pattern(text=parts[-1], kind="identifier", source=DOTTED_SOURCE))


def pattern_regex(pattern: Pattern) -> str:
    """The rg (Rust regex) source for one pattern."""
    if pattern.kind == "regex":
        return pattern.text
    escaped = _rust_escape(pattern.text)
    if pattern.kind == "identifier":
        return rf"\b{escaped}\b"
    return escaped


def _rust_escape(text: str) -> str:
    """Escape every character the Rust regex syntax treats specially."""
    special = set("\\.+*?()|[]{}^$#&-~")
    out: list[str] = []
    for ch in text:
        if ch in special:
            out.append("\\" + ch)
        elif ch == "\n":
            out.append(r"\n")
        elif ch == "\t":
            out.append(r"\t")
        elif ch == "\r":
            out.append(r"\r")
        else:
            out.append(ch)
    return "".join(out)
