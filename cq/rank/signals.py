"""Query-aware boosts: the queried name's own definition, and files named after the query."""

from __future__ import annotations

import posixpath
import re

from cq.model import Finding, Pattern, RankWeights
from cq.parse import python_syntax, rust_syntax

_SEGMENT = re.compile(r"(?:\.|::)")
_NAME_PATH = re.compile(r"[A-Za-z_]\w*(?:(?:\.|::)[A-Za-z_]\w*)*")
# a definition's own line typed as text ("class Schema", "async def load", "pub fn parse") or
# a name with its parenthesis ("Schema("): it asks for that name's definition, as the name
# alone would
_KEYWORDS = "|".join((*python_syntax.DEFINITION_KEYWORDS, *rust_syntax.ITEM_KEYWORDS))
_TYPED_NAME = re.compile(
    rf"(?:(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?(?:{_KEYWORDS})\s+)?"
    r"(?P<name>[A-Za-z_]\w*)\s*\(?"
)
_DEFINED_ON_LINE = re.compile(rf"\b(?:{_KEYWORDS})\s+([A-Za-z_]\w*)")
_GENERIC_STEMS = frozenset({"__init__", "mod", "lib", "main", "__main__"})


def queried_names(patterns: tuple[Pattern, ...]) -> frozenset[str]:
    """The names an identifier query asks about: the last segment of each identifier pattern,
    and the name in a definition's line or a call's head the user typed as text (``class
    Schema``, ``Schema(``)."""
    names = {_last_segment(p.text) for p in patterns if p.kind == "identifier"}
    for p in patterns:  # also ``-w 'get_value('``: an identifier search of a call's head
        typed = _TYPED_NAME.fullmatch(p.text.strip()) if p.kind != "regex" else None
        if typed is not None and p.source == "query":
            names.add(typed.group("name"))
    return frozenset(names)


def is_exact_definition(finding: Finding, names: frozenset[str]) -> bool:
    """True for a definition whose defined name is one of the queried names."""
    return finding.category == "definition" and defined_name(finding) in names


def defined_name(finding: Finding) -> str:
    """The name a definition finding defines: its text's last segment when the text is a
    name, else the name its line defines (text such as ``class Schema`` or ``Schema(`` also
    matches ``class SchemaABC:`` and ``class AuthorSchema(Schema):``, which define others)."""
    if _NAME_PATH.fullmatch(finding.text):
        return _last_segment(finding.text)
    whole = _DEFINED_ON_LINE.search(finding.line_text)
    return whole.group(1) if whole else _last_segment(finding.text)


def exact_definition(finding: Finding, names: frozenset[str], weights: RankWeights) -> float:
    """Boost a definition of the queried name: the answer to an identifier query."""
    return weights.exact_definition if is_exact_definition(finding, names) else 1.0


def filename_match(path: str, names: frozenset[str], weights: RankWeights) -> float:
    """Boost files whose stem (or package dir, for ``__init__``/``mod``/``lib``) is the name."""
    if not names:
        return 1.0
    stem = posixpath.splitext(posixpath.basename(path))[0]
    if stem in _GENERIC_STEMS:
        stem = posixpath.basename(posixpath.dirname(path)) or stem
    key = _fold(stem)
    folded = [_fold(n) for n in names]
    if key in folded:
        return weights.filename_exact
    if any(len(n) >= 4 and n in key for n in folded):
        return weights.filename_partial
    return 1.0


def nesting_depth(scope: str | None) -> int:
    """Levels of the containing scope: ``A.B.m`` is 3, ``impl T::m`` is 2, module level 0."""
    return len(_SEGMENT.split(scope)) if scope else 0


def _last_segment(text: str) -> str:
    return _SEGMENT.split(text)[-1]


def _fold(name: str) -> str:
    """Snake/camel/kebab-blind comparison key: ``SearchRequest`` ~ ``search_request``."""
    return name.replace("_", "").replace("-", "").lower()


def cuts_name(f: Finding) -> bool:
    """The hit starts or ends inside a longer name (a literal ``impl Arg`` in ``impl
    ArgAction``, ``foo(`` in ``get_foo(``): the text the user typed ends where the name goes
    on, so it is part of another name. False when its line cannot tell (a line cut for the
    report)."""
    line, start, end = f.line_text, f.col, f.col + len(f.text)
    if not f.text or line[start:end] != f.text:
        return False
    inside_start = start > 0 and _word(line[start - 1]) and _word(f.text[0])
    inside_end = end < len(line) and _word(line[end]) and _word(f.text[-1])
    return inside_start or inside_end


def _word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"
