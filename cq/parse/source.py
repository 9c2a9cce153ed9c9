"""Read a file once: bytes, a content hash for cache keys, and UTF-8 text (or None) on demand."""

from __future__ import annotations

import hashlib
from pathlib import Path

from cq.model import Language


class _Undecoded:
    """``text`` not computed yet (``None`` means the bytes are not UTF-8)."""


UNDECODED = _Undecoded()


class SourceFile:
    """One file's content. ``text`` is None when the bytes are not valid UTF-8; it is decoded
    on first use (a warm search reads hashes and cached records, never the text)."""

    __slots__ = ("_text", "data", "digest", "language", "path")

    def __init__(
        self,
        path: str,  # relative to the root, as in RawMatch.file
        language: Language,
        data: bytes,
        text: str | _Undecoded | None,
        digest: str,  # blake2b of the bytes, hex
    ) -> None:
        self.path, self.language, self.data, self.digest = path, language, data, digest
        self._text = text

    @property
    def text(self) -> str | None:
        if isinstance(self._text, _Undecoded):
            try:
                self._text = self.data.decode("utf-8")
            except UnicodeDecodeError:
                self._text = None
        return self._text

    def line_starts(self) -> list[int]:
        """Byte offset of the start of each line (index 0 is line 1)."""
        starts = [0]
        find = self.data.find
        pos = find(b"\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find(b"\n", pos + 1)
        return starts


def load_source(root: Path, rel: str, language: Language) -> SourceFile | None:
    """The file's content, or None when it cannot be read."""
    try:
        data = (root / rel).read_bytes()
    except OSError:
        return None
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    return SourceFile(rel, language, data, UNDECODED, digest)
