"""Code units of one file: the definitions a question can be about, found by a line scanner.

A unit is a class, a function or method (Python), or an fn, impl, trait, struct, enum, mod or
macro_rules (Rust), with its qualified name, definition line, signature, doc text and its own
source text (a class's text stops where its first member unit starts, so nothing is indexed
twice). Functions nested in functions are not units: their text stays in the outer one, as in
the benchmark's gold functions.

Why a scanner and not a parser: ``ast.parse`` or tree-sitter over every file of a tree
takes several times the first build's budget, which this scanner, with the documents' rows,
fits in (``python -m bench.index_speed``; figures: bench/results/2026-11-29-figures-from-cq.md).
It relies on how code is laid out (Python's
indentation, rustfmt's closing brace at the item's indent), which is what indexing for
relevance needs, not exact spans.
"""

from __future__ import annotations

import msgspec

from cq.index.pyscan import python_units
from cq.index.rsscan import rust_units


class Unit(msgspec.Struct, frozen=True, array_like=True):
    """One definition: ``qualname`` is ``Class.method`` (Python) or ``Type::method`` (Rust)."""

    kind: str  # class | function | module | fn | impl | trait | struct | enum | mod | macro
    qualname: str
    line: int  # 1-based line of the definition keyword
    names: str  # the unit's own name and its containers' names, space-separated
    signature: str
    doc: str
    text: str  # the unit's own source text (identifiers, comments and strings)


def file_units(text: str, language: str) -> list[Unit]:
    """The units of ``text`` in source order."""
    rows = python_units(text) if language == "python" else rust_units(text)
    return [Unit(*row) for row in rows]
