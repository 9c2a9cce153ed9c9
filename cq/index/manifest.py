"""The manifest: path -> (size, content hash) of every indexed file: what the index holds.

A file whose digest (``changes.py``: recalled by stat, or read and hashed) differs from its
entry gets its documents replaced. Written after the index commits
(atomically, by the process holding tantivy's writer lock), so a crash between the two only
makes the next run re-index a few files.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import msgspec


class Entry(msgspec.Struct, frozen=True, array_like=True):
    size: int
    digest: str


Manifest = dict[str, Entry]
_decoder = msgspec.msgpack.Decoder(dict[str, Entry])


def read_manifest(path: Path) -> Manifest:
    """The stored manifest; missing or unreadable: empty (everything gets indexed)."""
    try:
        return _decoder.decode(path.read_bytes())
    except (OSError, msgspec.DecodeError):
        return {}


def write_manifest(path: Path, manifest: Manifest) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(msgspec.msgpack.encode(manifest))
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
