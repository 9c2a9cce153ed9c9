"""The manifest: path -> (size, content hash) of every indexed file: what the index holds,
and the ``Seal`` of the commit that holds it (``integrity.py``).

A file whose digest (``changes.py``: recalled by stat, or read and hashed) differs from its
entry gets its documents replaced. Written after the index commits (atomically, by the
process holding tantivy's writer lock); a crash between the two leaves a seal that does not
match ``meta.json``, and the next run builds the index again. A missing or unreadable
manifest is no manifest: an index with segments but no manifest is rebuilt, so documents of
files deleted meanwhile never linger. Paths that are not UTF-8 (a tree's file names are
bytes) are stored by their bytes (``keys.py``).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import msgspec

from cq.index.integrity import Damage, Seal, read_regular
from cq.index.keys import path_key, path_of


class Entry(msgspec.Struct, frozen=True, array_like=True):
    size: int
    digest: str


Manifest = dict[str, Entry]


class Stored(msgspec.Struct, frozen=True, kw_only=True):
    """The manifest file: the indexed files and the seal of the commit holding them."""

    files: Manifest
    seal: Seal
    escaped: bool = False  # some paths are stored by their bytes (``keys.path_key``)


_decoder = msgspec.msgpack.Decoder(Stored)
_MAX_BYTES = 1024 * 1024 * 1024


def read_manifest(path: Path) -> Stored | None:
    """The stored manifest; missing, not a regular file or unreadable: None."""
    try:
        data = read_regular(path, _MAX_BYTES)
        stored = _decoder.decode(data) if data is not None else None
    except (Damage, msgspec.DecodeError):
        return None
    if stored is not None and stored.escaped:
        files = {path_of(k): v for k, v in stored.files.items()}
        return msgspec.structs.replace(stored, files=files, escaped=False)
    return stored


def write_manifest(path: Path, files: Manifest, seal: Seal) -> None:
    try:
        data = msgspec.msgpack.encode(Stored(files=files, seal=seal))
    except UnicodeEncodeError:  # a path that is not UTF-8
        keyed = {path_key(k): v for k, v in files.items()}
        data = msgspec.msgpack.encode(Stored(files=keyed, seal=seal, escaped=True))
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
