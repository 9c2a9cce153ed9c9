"""Identifiers the way people write about them: ``FileUploadHandler`` -> fileuploadhandler
file upload handler; ``FILE_UPLOAD_PERMISSION`` -> file_upload_permission file upload
permission. Applied in Python to the small fields (names, signatures, paths) and to the query;
bodies are split by tantivy's simple tokenizer (see ``schema.py`` for why)."""

from __future__ import annotations

import functools
import re

from cq.rewrite import FUNCTION_WORDS

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def split_words(text: str) -> str:
    """Every identifier of ``text`` lower-cased, and its subwords when it is a compound."""
    return " ".join(map(_identifier_words, _IDENT.findall(text)))


# A build splits the same identifiers over and over (a class's name in every method's names,
# ``self`` in every signature): on the bench tree of bench/index_speed.py, 19 MB, splitting
# the names and signatures took 0.27 CPU-s split each time, 0.18 remembered. Bounded: a
# long-lived process (``cq mcp``) indexing many trees keeps at most this many.
@functools.lru_cache(maxsize=1 << 16)
def _identifier_words(ident: str) -> str:
    """``ident`` lower-cased, then its subwords when it has more than one."""
    parts = _PART.findall(ident)
    if len(parts) > 1:
        return f"{ident} {' '.join(parts)}".lower()
    return ident.lower()


def prose_words(text: str) -> list[str]:
    """The words of a question or an issue text as the index is asked: ``split_words``
    without the function words (``cq.rewrite.FUNCTION_WORDS``, the stop-word list's first
    grade)."""
    return [w for w in split_words(text).split() if w not in FUNCTION_WORDS]
