"""What one source (ast-grep, LibCST, tree-sitter) says about a hit's structure.

Each source fills a ``StructuralFacts``; the Python pipeline merges them by gap-fill (earlier
stage wins) and the agreement step compares the fields two or more sources produced.
"""

from __future__ import annotations

import re

import msgspec


class StructuralFacts(msgspec.Struct, frozen=True, kw_only=True):
    """Structural reading of one hit; empty values mean "this source did not say"."""

    construct: str | None = None
    signature: str | None = None
    decorators: tuple[str, ...] = ()
    class_context: str | None = None
    scope_chain: tuple[str, ...] = ()
    structural_context: tuple[str, ...] = ()
    call_target: str | None = None
    call_receiver: str | None = None
    call_method: str | None = None


# Fields whose value depends on the parser's own node names: never compared across sources.
PARSER_SPECIFIC = frozenset({"structural_context"})

_SPACE = re.compile(r"\s+")


def squash(text: str) -> str:
    """Whitespace-normalised code text: one space per run, none just inside brackets."""
    text = _SPACE.sub(" ", text).strip()
    for opening in "([{":
        text = text.replace(opening + " ", opening)
    for closing in ")]}":
        text = text.replace(" " + closing, closing).replace("," + closing, closing)
    return text


def produced(facts: StructuralFacts) -> dict[str, object]:
    """The non-empty fields of ``facts``, by name (for merging and comparing)."""
    return {
        name: value
        for name in facts.__struct_fields__
        if (value := getattr(facts, name)) not in (None, ())
    }
