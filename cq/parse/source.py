"""Read a file once: bytes, a content hash for cache keys, and UTF-8 text (or None) on demand.

The bytes every stage analyses are the bytes rg searched (``searched_bytes``): rg drops a
UTF-8 byte order mark and transcodes UTF-16 behind one, and reports offsets in what is left,
so the parses must see the same bytes for rg's offsets to land on the same characters. A lone
CR (old Mac line ends) becomes LF, one byte for one, so offsets stay put while tree-sitter,
which takes only LF and CRLF for line ends, reads the lines Python and editors see.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import msgspec

from cq.cache.digests import FileStat, read_stable
from cq.model import Language
from cq.rooted import open_inside


class _Undecoded:
    """``text`` not computed yet (``None`` means the bytes are not UTF-8)."""


UNDECODED = _Undecoded()

_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be"}
_LONE_CR = re.compile(rb"\r(?!\n)")


def searched_bytes(raw: bytes) -> bytes:
    """A file's bytes as rg searched them (see the module docstring), lone CRs as LFs."""
    data = raw
    if raw.startswith(_UTF8_BOM):
        data = raw[3:]
    elif raw[:2] in _UTF16_BOMS:
        data = raw[2:].decode(_UTF16_BOMS[raw[:2]], errors="replace").encode("utf-8")
    if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):
        data = _LONE_CR.sub(b"\n", data)
    return data


def split_lines(text: str) -> list[str]:
    """Lines split on "\\n" only, as rg, ``ast`` and the index's scanner count them
    (``str.splitlines`` also splits at a form feed, a page break, and shifts every later
    line), each without the CR of a CRLF."""
    return [line.removesuffix("\r") for line in text.split("\n")]


class SourceFile:
    """One file's content as ``searched_bytes`` gives it (``digest`` hashes those bytes).
    ``text`` is None when they are not valid UTF-8; it is decoded on first use (a warm search
    reads hashes and cached records, never the text)."""

    __slots__ = ("_lines", "_text", "data", "digest", "language", "path")

    def __init__(
        self,
        path: str,  # relative to the root, as in RawMatch.file
        language: Language,
        data: bytes,
        text: str | _Undecoded | None,
        digest: str,  # a hash of the bytes, hex (``load_source``)
    ) -> None:
        self.path, self.language, self.data, self.digest = path, language, data, digest
        self._text = text
        self._lines: list[str] | None = None

    @property
    def text(self) -> str | None:
        if isinstance(self._text, _Undecoded):
            try:
                self._text = self.data.decode("utf-8")
            except UnicodeDecodeError:
                self._text = None
        return self._text

    def lines(self) -> list[str] | None:
        """``split_lines`` of the text, None when it is not UTF-8. Made once: enrichment,
        the index's functions and the semantic stage share them (the list is the file's:
        read it, never change it)."""
        if self._lines is None and self.text is not None:
            self._lines = split_lines(self.text)
        return self._lines

    def line_starts(self) -> list[int]:
        """Byte offset of the start of each line (index 0 is line 1)."""
        starts = [0]
        find = self.data.find
        pos = find(b"\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find(b"\n", pos + 1)
        return starts


class Loaded(msgspec.Struct, frozen=True):
    """A file as read: its content, and the stat it had throughout the read (None: it
    changed meanwhile) with the clock before that stat, for ``cq.cache.digests``."""

    source: SourceFile
    stat: FileStat | None
    stat_taken_ns: int


def load_source(root: Path, rel: str, language: Language) -> Loaded | None:
    """The file's content, or None when it cannot be read."""
    try:
        # Opened through cq.rooted: not a link swapped in since rg's walk.
        raw, stat, taken = read_stable(
            os.path.join(root, rel),  # not ``root / rel``: a Path costs more than the read
            lambda path, _flags: open_inside(root, path),
        )
    except (OSError, ValueError):
        return None
    data = searched_bytes(raw)
    # SHA-256 cut to 128 bits: with the SHA instructions of most x86 and ARMv8 CPUs, twice
    # blake2b's speed (the 167 MB an audit search hashes: 0.13 CPU-s against 0.28).
    digest = hashlib.sha256(data).hexdigest()[:32]
    return Loaded(SourceFile(rel, language, data, UNDECODED, digest), stat, taken)
