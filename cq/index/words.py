"""Identifiers the way people write about them: ``FileUploadHandler`` -> fileuploadhandler
file upload handler; ``FILE_UPLOAD_PERMISSION`` -> file_upload_permission file upload
permission. Applied in Python to the small fields (names, signatures, paths) and to the query;
bodies are split by tantivy's simple tokenizer (see ``schema.py`` for why)."""

from __future__ import annotations

import re

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def split_words(text: str) -> str:
    """Every identifier of ``text`` lower-cased, and its subwords when it is a compound."""
    out: list[str] = []
    for ident in _IDENT.findall(text):
        parts = _PART.findall(ident)
        out.append(ident.lower())
        if len(parts) > 1:
            out.extend(p.lower() for p in parts)
    return " ".join(out)
