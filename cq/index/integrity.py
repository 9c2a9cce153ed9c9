"""Check an index directory before tantivy reads it: tantivy trusts its files, cq does not.

Tantivy reads what ``meta.json`` says without checking it against the segment files: a
``max_doc`` too small, a zeroed header or a flipped bit in a fieldnorm file is a Rust panic
on a search (``pyo3_runtime.PanicException``) or, worse, a silently different ranking, and a
FIFO in place of ``meta.json`` blocks its open for good. So cq never lets tantivy open a
directory it has not checked:

- every entry of the directory is a regular file (never a FIFO, link, socket or directory,
  checked without opening it), and cq reads its own files with ``O_NONBLOCK | O_NOFOLLOW``;
- ``meta.json`` parses and names its segments' files, which exist;
- the ``Seal`` written with the manifest after every commit (the CRC-32 of ``meta.json`` and
  the size and CRC-32 of every segment file it names) matches. Segment files never change
  once written, so a checksum that moved is damage. Tantivy's own footer checksums are not
  reachable from the Python binding (no ``validate_checksum``). CRC-32, as those footers:
  it finds damage, it does not authenticate (whoever can write the index can write its
  manifest too), and it is far cheaper than a cryptographic hash over the segments
  (figures: bench/results/2026-11-29-figures-from-cq.md).

``verify`` raises ``Damage`` naming what is wrong; ``opening.py`` decides what to do.
"""

from __future__ import annotations

import json
import os
import stat
import zlib
from pathlib import Path

import msgspec

META = "meta.json"
_MAX_META_BYTES = 64 * 1024 * 1024  # far above any meta.json: a list of segments and a schema
_CHUNK = 1024 * 1024


class Damage(Exception):
    """The directory is not an index cq wrote: the message says what is wrong."""


class Sealed(msgspec.Struct, frozen=True, array_like=True):
    size: int
    crc: str  # CRC-32, hex


class Seal(msgspec.Struct, frozen=True, array_like=True):
    """What the index held when its writer last committed."""

    meta: str  # CRC-32 of meta.json
    files: dict[str, Sealed]  # every segment file meta.json names: size and CRC-32


def engine_failed(exc: BaseException) -> bool:
    """Whether ``exc`` is tantivy failing (an error, or a Rust panic, which pyo3 raises as
    ``pyo3_runtime.PanicException``: a ``BaseException``, not an ``Exception``) rather than
    the search being cancelled or the process told to stop."""
    if isinstance(exc, (OSError, ValueError, RuntimeError, Damage)):
        return True
    return type(exc).__name__ == "PanicException"


def describe(exc: BaseException) -> str:
    """One short line for a failure of the index (a panic's message may span lines)."""
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return (text.strip().splitlines() or [type(exc).__name__])[0][:160]


def read_regular(path: Path, limit: int = _MAX_META_BYTES) -> bytes | None:
    """The bytes of ``path`` (None: it does not exist), refusing anything but a regular file
    of at most ``limit`` bytes without blocking on it: a FIFO opened non-blocking returns at
    once, and is then refused by its ``fstat``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Damage(f"{path.name}: {exc.strerror or exc}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Damage(f"{path.name} is not a regular file")
        if info.st_size > limit:
            raise Damage(f"{path.name} is {info.st_size} bytes")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(limit + 1)
    finally:
        os.close(fd)


def check_entries(directory: Path) -> None:
    """Every entry is a regular file (tantivy would open a FIFO and block, follow a link)."""
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise Damage(f"the index dir cannot be listed: {exc.strerror or exc}") from exc
    for entry in entries:
        if not entry.is_file(follow_symlinks=False):
            raise Damage(f"{os.fsdecode(entry.name)!r} is not a regular file")


def segment_files(directory: Path, meta: bytes) -> list[str]:
    """The files of the segments ``meta`` names (each must have some), sorted."""
    ids = _segment_ids(meta)
    if not ids:
        return []
    names: dict[str, list[str]] = {i: [] for i in ids}
    for name in os.listdir(directory):
        head = name.split(".", 1)[0]
        if head in names:
            names[head].append(name)
    missing = [i for i, files in names.items() if not files]
    if missing:
        raise Damage(f"{META} names segment {missing[0]}, which has no files")
    return sorted(n for files in names.values() for n in files)


def _segment_ids(meta: bytes) -> list[str]:
    try:
        parsed = json.loads(meta)
        segments = parsed["segments"]
        ids = []
        for segment in segments:
            max_doc = segment["max_doc"]
            if not isinstance(max_doc, int) or isinstance(max_doc, bool) or max_doc < 0:
                raise TypeError("max_doc")
            ids.append(str(segment["segment_id"]).replace("-", ""))
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise Damage(f"{META} is not tantivy's ({type(exc).__name__})") from exc
    if any(len(i) != 32 or not _hex(i) for i in ids):
        raise Damage(f"{META} names a segment id that is not one")
    return ids


def _hex(text: str) -> bool:
    try:
        int(text, 16)
    except ValueError:
        return False
    return True


def checksum(path: Path) -> Sealed:
    """Size and CRC-32 of one file (regular, read without blocking)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Damage(f"{path.name} is not a regular file")
        crc = size = 0
        while chunk := os.read(fd, _CHUNK):
            crc = zlib.crc32(chunk, crc)
            size += len(chunk)
        return Sealed(size, f"{crc:08x}")
    finally:
        os.close(fd)


def seal(directory: Path) -> Seal:
    """The seal of the index as it is now: called by the process holding the writer, after
    its commit and merges, so nothing moves while it hashes."""
    meta = read_regular(directory / META) or b""
    files = {name: checksum(directory / name) for name in segment_files(directory, meta)}
    return Seal(meta=_crc(meta), files=files)


def verify(directory: Path, sealed: Seal | None) -> None:
    """Raise ``Damage`` unless the directory holds exactly what ``sealed`` says (or, with no
    seal, no segment at all: a new index)."""
    check_entries(directory)
    meta = read_regular(directory / META)
    if meta is None:
        if sealed is not None and sealed.files:
            raise Damage(f"{META} is missing")
        return
    try:
        names = segment_files(directory, meta)
    except OSError as exc:
        raise Damage(f"the index dir cannot be listed: {exc.strerror or exc}") from exc
    if sealed is None:
        if names:
            raise Damage("the index has segments but no manifest")
        return
    if sealed.meta != _crc(meta):
        raise Damage(f"{META} is not the one last committed")
    if set(names) != set(sealed.files):
        raise Damage("the segment files are not the ones last committed")
    for name in names:
        try:
            found = checksum(directory / name)
        except OSError as exc:
            raise Damage(f"{name}: {exc.strerror or exc}") from exc
        if found != sealed.files[name]:
            raise Damage(f"{name} is not the file last committed")


def _crc(data: bytes) -> str:
    return f"{zlib.crc32(data):08x}"
