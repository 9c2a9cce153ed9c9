"""Index documents of one file: the file itself and each of its code units.

Runs in pool workers too, so it returns plain rows (msgpack-able), not tantivy documents:
``(path, kind, qualname, line, names, signature, doc, text)``; the file's row comes first,
with kind "file", every defined name of the file and its whole text.
"""

from __future__ import annotations

from cq.index.units import file_units

DocRow = tuple[str, str, str, int, str, str, str, str]


def file_rows(path: str, data: bytes, language: str) -> list[DocRow]:
    """The file's document and its units' documents."""
    text = data.decode("utf-8", errors="replace")
    units = file_units(text, language)
    names = " ".join(u.names for u in units if u.names)
    module_doc = units[0].doc if units else ""
    rows: list[DocRow] = [(path, "file", "", 1, names, "", module_doc, text)]
    rows.extend(
        (path, u.kind, u.qualname, u.line, u.names, u.signature, u.doc, u.text) for u in units
    )
    return rows
