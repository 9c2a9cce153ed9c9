"""Digest memory: a file's content digest remembered under its stat, so a warm search can look
payloads up by digest without reading and hashing files that did not change.

An entry maps a file's path to the ``FileStat`` (device, inode, size, mtime and ctime in
nanoseconds) it had when its bytes were read, and the digest of those bytes. ``recall``
stats the file now and gives the digest back only when all five fields are equal.

What it trusts: that a write to a file's content changes its ctime (the kernel sets it on
every write, truncate and rename over; unlike mtime it cannot be set back by ``touch`` or
``os.utime``), or its inode, size or mtime, to a value other than the one recorded. That holds
unless the write falls in the same timestamp tick as the stat that was recorded, which is the
"racy" case git describes (``Documentation/technical/racy-git.txt``): so an entry is only
learned when the file's mtime and ctime are at least ``RACY_NS`` older than the moment its
stat was taken, and the stat is taken before the read and checked again after it (a file
written during the read is not learned). ``RACY_NS`` (2 s) covers the coarse clock of local
file systems (one tick, 1-10 ms), FAT's 2 s mtime and a small clock skew to a network file
system. It does not cover a file system whose ctime does not move on writes, a clock set back
by more than that, or a writer that restores all five fields (a block-level copy).

What is remembered is one digest function's output: ``DigestMemory(kind, builders)`` keeps
its entries under a namespace derived from the code that computes the digest (as payload
caches are, ``cq.cache.payloads.namespace``), so a change to that code forgets them. The
Corpus uses it for the digest of a file's searched bytes; the index can keep its own.

Safe with several cq processes at once: an entry is one store row keyed by absolute path; a
concurrent writer's entry for the same path is as good as this one's.
"""

from __future__ import annotations

import os
import stat as stat_mode
import time
from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from cq.cache.keys import storable
from cq.cache.payloads import namespace
from cq.cache.store import open_store

# hand-set: above FAT's 2 s mtime step and the 1-10 ms tick of local file systems' clocks.
RACY_NS = 2_000_000_000


class FileStat(msgspec.Struct, frozen=True, array_like=True):
    """The fields of ``os.stat`` that move when a file's content does."""

    dev: int
    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileStat:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class Remembered(msgspec.Struct, frozen=True, array_like=True):
    """One entry: the stat a file had when the bytes behind ``digest`` were read."""

    stat: FileStat
    digest: str


class Recalled(msgspec.Struct, frozen=True):
    """A file whose stat matches its entry: ``digest`` is its content's, ``size`` its size."""

    digest: str
    size: int


class MemoryStats(msgspec.Struct, frozen=True, kw_only=True):
    """``recalled`` files trusted without a read, ``learned`` entries written, ``racy`` reads
    too close to the file's last change to be learned."""

    recalled: int = 0
    learned: int = 0
    racy: int = 0


def stat_file(path: str) -> FileStat | None:
    """The stat of a regular file (following links), None for anything else or an error."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return FileStat.of(st) if stat_mode.S_ISREG(st.st_mode) else None


def file_size(path: str) -> int | None:
    """``stat_file(path).size`` without building the stat: a first build's size check stats
    every file of a tree (19,215 on the stdlib with its site-packages) and keeps only this."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_size if stat_mode.S_ISREG(st.st_mode) else None


def stat_fingerprint(digest: Any, root: str, files: Iterable[str]) -> None:
    """Feed ``digest`` (a hashlib object) each file's path, size and mtime: what cached
    answers about a whole tree (the rewriter's vocabulary, Pyrefly's answers) are keyed on.
    A file gone since it was listed is left out."""
    for rel in files:
        try:
            st = os.stat(f"{root}/{rel}")
        except OSError:
            continue
        digest.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode(errors="surrogateescape"))


def read_stable(
    path: str, opener: Callable[[str, int], int] | None = None
) -> tuple[bytes, FileStat | None, int]:
    """The file's bytes, its stat when they are known to be the bytes it held then (None if it
    changed during the read), and the clock before the stat (``time.time_ns``).
    Raises ``OSError`` as ``os.open`` (or ``opener``, given the path and flags) does.

    Read with ``os.read`` into one buffer of the file's size (no file object: an audit
    search reads thousands of files, and the object costs more than a small file's read)."""
    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    fd = opener(path, flags) if opener is not None else os.open(path, flags)
    try:
        started = time.time_ns()
        st = os.fstat(fd)
        chunks: list[bytes] = []
        want = st.st_size + 1  # one read to the end of a file that did not grow meanwhile
        while chunk := os.read(fd, want):
            chunks.append(chunk)
            want = _READ_MORE
        after = FileStat.of(os.fstat(fd))
    finally:
        os.close(fd)
    data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    before = FileStat.of(st)
    return data, (before if before == after else None), started


_READ_MORE = 1 << 16  # what a file that grew during its read is read on by (not tuned)


class DigestMemory:
    """One kind of digest, remembered per absolute path (see the module docstring)."""

    def __init__(self, kind: str, builders: tuple[str, ...], *, enabled: bool = True) -> None:
        """``builders``: the modules that compute the digest (their code keys the entries)."""
        self.namespace = namespace(f"digests-{kind}", builders, recorded=enabled)
        self.store = open_store() if enabled else None
        self.encoder = msgspec.msgpack.Encoder()
        self.decoder = msgspec.msgpack.Decoder(Remembered)
        self.pending: dict[str, bytes] = {}
        self._recalled = self._learned = self._racy = 0

    def recall(self, paths: Iterable[str]) -> dict[str, Recalled]:
        """The files among ``paths`` whose stat now equals the one remembered with a digest."""
        if self.store is None:
            return {}
        stats = {path: stat_file(path) for path in paths if storable(path)}
        found: dict[str, Recalled] = {}
        wanted = [path for path, st in stats.items() if st is not None]
        for path, blob in self.store.get_many(self.namespace, wanted).items():
            try:
                entry = self.decoder.decode(blob)
            except (msgspec.DecodeError, msgspec.ValidationError):
                continue  # a damaged entry is a miss; the next learn replaces it
            if entry.stat == stats[path]:
                found[path] = Recalled(entry.digest, entry.stat.size)
        self._recalled += len(found)
        return found

    def learn(self, path: str, stat: FileStat | None, digest: str, stat_taken_ns: int) -> None:
        """Queue ``path``'s entry: ``digest`` of the bytes it held while its stat was ``stat``
        (None: it changed during the read), taken at ``stat_taken_ns``. Racy stats are not
        learned."""
        if self.store is None or stat is None or not storable(path):
            return
        if max(stat.mtime_ns, stat.ctime_ns) > stat_taken_ns - RACY_NS:
            self._racy += 1
            return
        self.pending[path] = self.encoder.encode(Remembered(stat, digest))

    def flush(self) -> None:
        """Write the queued entries in one transaction."""
        if self.store is not None and self.pending:
            self.store.put_many(self.namespace, self.pending)
            self._learned += len(self.pending)
        self.pending = {}

    def stats(self) -> MemoryStats:
        return MemoryStats(recalled=self._recalled, learned=self._learned, racy=self._racy)
