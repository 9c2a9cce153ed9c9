"""Query modes: decide how a query is searched and turn patterns into rg regexes.

Every pattern reaches rg as a regex after ``-e``, so one rg run can mix word-bounded
identifiers and fixed-string literals, and a query starting with ``-`` is never a flag.
"""

from __future__ import annotations

import re

from cq.model import Pattern, QueryMode

# A dotted name such as ``store.insert_call``; ``\w`` is Unicode-aware, like Python identifiers.
_IDENTIFIER = re.compile(r"[^\W\d]\w*(?:(?:\.|::)[^\W\d]\w*)*")


def is_identifier_query(query: str) -> bool:
    """True when the query is one (possibly dotted or ``::``-qualified) identifier."""
    return _IDENTIFIER.fullmatch(query) is not None


def detect_mode(query: str) -> QueryMode:
    """Identifier when it looks like one, otherwise literal: ``foo()`` and ``a+b`` are text."""
    return "identifier" if is_identifier_query(query.strip()) else "literal"


def patterns_for_query(query: str, mode: QueryMode) -> tuple[Pattern, ...]:
    """The user's own query as a single pattern in the given mode."""
    text = query.strip() if mode == "identifier" else query
    return (Pattern(text=text, kind=mode),)


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
