"""Index documents of one file: the file itself and each of its code units.

Runs in pool workers too, so it returns plain rows (msgpack-able), not tantivy documents:
``(path, kind, qualname, line, path words, name words, signature words, doc, text)``; the
file's row comes first, with kind "file", the words of every defined name of the file and its
whole text. Names and signatures are split here (``words.py``), each unit's once: the file's
name words are its units' joined.
"""

from __future__ import annotations

from cq.index.units import file_units
from cq.index.words import split_words

Row = tuple[str, str, str, int, str, str, str, str, str]


def file_rows(path: str, data: bytes, language: str) -> list[Row]:
    """The file's document and its units' documents."""
    text = data.decode("utf-8", errors="replace")
    units = file_units(text, language)
    rows: list[Row] = []
    for u in units:
        names, signature = split_words(u.names), split_words(u.signature)
        rows.append((path, u.kind, u.qualname, u.line, "", names, signature, u.doc, u.text))
    names = " ".join(r[5] for r in rows if r[5])
    module_doc = units[0].doc if units else ""
    rows.insert(0, (path, "file", "", 1, split_words(path), names, "", module_doc, text))
    return rows
