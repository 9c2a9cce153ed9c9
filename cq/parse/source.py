"""Read a file once: bytes, UTF-8 text (or None), and a content hash for cache keys."""

from __future__ import annotations

import hashlib
from pathlib import Path

import msgspec

from cq.model import Language


class SourceFile(msgspec.Struct, frozen=True):
    """One file's content. ``text`` is None when the bytes are not valid UTF-8."""

    path: str  # relative to the root, as in RawMatch.file
    language: Language
    data: bytes
    text: str | None
    digest: str  # blake2b of the bytes, hex

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
    try:
        text: str | None = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    return SourceFile(path=rel, language=language, data=data, text=text, digest=digest)
