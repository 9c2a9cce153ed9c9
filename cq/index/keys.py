"""A file's key in the index: its path, or for a name that is not UTF-8, its bytes.

rg lists file names as bytes and cq reads them with ``surrogateescape`` (``cq.parse.listing``),
so ``caf\\udce9.py`` opens the file named ``caf\\xe9.py``; but tantivy's and msgpack's
strings are UTF-8, which a lone surrogate is not. Such a path is stored as NUL and its bytes
in hex: no file name holds a NUL, so no real path is ever read as one.
"""

from __future__ import annotations

import os
import re

_SURROGATE = re.compile("[\ud800-\udfff]")
_BYTES = "\0"


def path_key(path: str) -> str:
    """The stored form of ``path``: itself when it is UTF-8."""
    if not _SURROGATE.search(path):
        return path
    return _BYTES + os.fsencode(path).hex()


def path_of(key: str) -> str:
    """The path a stored key names (``path_key`` undone)."""
    if not key.startswith(_BYTES):
        return key
    return os.fsdecode(bytes.fromhex(key[1:]))


def readable(text: str) -> str:
    """``text`` with the lone surrogates of undecodable bytes as U+FFFD, for tantivy's
    tokenizer (a path's words)."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text
