"""The store's two files and their tables; opening them; forgetting entries.

``cq-v2.sqlite3`` holds ``entries`` (values under sequential ids, so a put appends where the
file ends instead of landing on random pages) and ``usage`` (id, namespace, stored and raw
bytes, last use: the rows size and recency decisions walk, ~40 bytes each, indexed by last
use). ``cq-v2-keys.sqlite3`` holds ``keys``: 64 bits of blake2b over namespace and key -> id,
~15 bytes an entry (8 MB for 500,000 entries). It is a file of its own so that it is
contiguous: one ``posix_fadvise(WILLNEED)`` at open reads it ahead in the background, and the
lookups of a search whose database fell out of the OS page cache do not become one random read
each (``bench/cache_growth.py``; its figures: bench/results/2026-11-29-figures-from-cq.md). The
two files commit separately (WAL, attached databases): after a crash between the two commits a
key may point to a missing or reused id, which the read checks (``entries.hash``), and an entry
may have no key, which eviction removes like any other.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from pathlib import Path

from cq.cache.faults import NotACache, is_transient

FILE_NAME = "cq-v2.sqlite3"  # the format is in the name: older cq versions used cq.sqlite3
KEYS_NAME = "cq-v2-keys.sqlite3"
LEGACY_NAME = "cq.sqlite3"
_FORMAT = 2
# Switching a file to WAL can fail at once, without the busy timeout, while another
# process writes it (sqlite returns BUSY where waiting could deadlock): 6 concurrent
# first opens of one new cache failed 6 times in 100 rounds before this retry, none after.
# Retried for up to ~1.6 s (hand-set: far above the few ms another cq's create takes).
_WAL_TRIES, _WAL_PAUSE = 10, 0.01
# A put dirties one keys page per entry, written whole to the WAL: 300 random inserts into
# 500,000 keys took 14.6 ms with 1 KiB pages, 21.8 ms with 4 KiB, 25.3 ms with 512 B (mean
# of 60 commits, checkpoints included; bench/cache_growth.py --part keys).
_KEYS_PAGE = 1024
_MAIN = (
    """CREATE TABLE entries (
        id INTEGER PRIMARY KEY,
        hash INTEGER NOT NULL,
        namespace TEXT NOT NULL,
        key TEXT NOT NULL,
        codec INTEGER NOT NULL,
        value BLOB NOT NULL
    )""",
    """CREATE TABLE usage (
        id INTEGER PRIMARY KEY,
        namespace TEXT NOT NULL,
        size INTEGER NOT NULL,
        raw INTEGER NOT NULL,
        used INTEGER NOT NULL
    )""",
    "CREATE INDEX usage_used ON usage(used)",
    f"PRAGMA user_version = {_FORMAT}",
)
_INCREMENTAL = 2  # ``PRAGMA auto_vacuum``'s value for INCREMENTAL
_KEYS = "CREATE TABLE IF NOT EXISTS k.keys (hash INTEGER PRIMARY KEY, id INTEGER NOT NULL)"


def files(path: Path) -> list[Path]:
    """Every file of the store at ``path`` (both databases, their WAL and shared memory)."""
    keys = path.with_name(KEYS_NAME)
    return [Path(f"{base}{suffix}") for base in (path, keys) for suffix in ("", "-wal", "-shm")]


def connect(path: Path, wal_bytes: int) -> sqlite3.Connection:
    """Open (creating if new) the store at ``path``, its WALs checkpointed at ``wal_bytes``
    and truncated to it; ``NotACache`` when it is another sqlite file, ``sqlite3.Error``,
    ``UnicodeError`` (a damaged schema's name in a message) or ``OSError`` when it cannot be
    opened."""
    _read_ahead(path.with_name(KEYS_NAME))
    # One connection per process, usable from any thread (the MCP server's workers).
    db = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)
    db.text_factory = _text
    try:
        db.execute("ATTACH DATABASE ? AS k", (str(path.with_name(KEYS_NAME)),))
        db.execute(f"PRAGMA k.page_size = {_KEYS_PAGE}")  # new files only, as below
        for schema in ("main", "k"):
            # New files only; asked first, as setting it takes the write lock even where it
            # changes nothing (a search opening the store waited out another's write).
            if db.execute(f"PRAGMA {schema}.auto_vacuum").fetchone()[0] != _INCREMENTAL:
                db.execute(f"PRAGMA {schema}.auto_vacuum = INCREMENTAL")
            _write_ahead(db, schema)
            db.execute(f"PRAGMA {schema}.synchronous = NORMAL")
            db.execute(f"PRAGMA {schema}.journal_size_limit = {wal_bytes}").fetchall()
        if db.execute("PRAGMA user_version").fetchone()[0] != _FORMAT:
            _create(db, path)
        db.execute(f"PRAGMA wal_autocheckpoint = {max(1, wal_bytes // _page_size(db))}")
        db.execute(_KEYS)  # a keys file deleted by hand: entries age out unreachable
        _check(db)
    except BaseException:
        db.close()
        raise
    return db


def _text(raw: bytes) -> str:
    """Text columns as read: damaged UTF-8 replaced, so it matches no key and raises nothing."""
    return raw.decode("utf-8", "replace")


def _page_size(db: sqlite3.Connection) -> int:
    return db.execute("PRAGMA page_size").fetchone()[0] or 4096


def _write_ahead(db: sqlite3.Connection, schema: str) -> None:
    """Put ``schema`` in WAL mode, waiting out another process that holds the file."""
    for attempt in range(_WAL_TRIES):
        try:
            db.execute(f"PRAGMA {schema}.journal_mode = WAL").fetchall()
            return
        except sqlite3.OperationalError as exc:
            if not is_transient(exc) or attempt == _WAL_TRIES - 1:
                raise
            time.sleep(_WAL_PAUSE * 2 ** min(attempt, 5))


def _create(db: sqlite3.Connection, path: Path) -> None:
    """Lay out a new store (another process may be doing the same: one wins)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            if db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                raise NotACache("file is not a cq cache database")
            for statement in _MAIN:
                db.execute(statement)
            db.execute("DROP TABLE IF EXISTS k.keys")  # left from a store set aside
            db.execute(_KEYS)
        elif version != _FORMAT:
            raise NotACache(f"unknown cache format {version}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    for suffix in ("", "-wal", "-shm"):  # an older cq's cache: its entries are never read
        with contextlib.suppress(OSError):
            path.with_name(f"{LEGACY_NAME}{suffix}").unlink(missing_ok=True)


def _check(db: sqlite3.Connection) -> None:
    """``NotACache`` unless the tables have the columns this code reads (prepared, not run)."""
    try:
        db.execute("SELECT id, hash, namespace, key, codec, value FROM entries LIMIT 0")
        db.execute("SELECT id, namespace, size, raw, used FROM usage LIMIT 0")
        db.execute("SELECT hash, id FROM k.keys LIMIT 0")
    except sqlite3.OperationalError as exc:
        raise NotACache(f"not this cq's cache layout: {exc}") from exc


_READ_AHEAD: set[Path] = set()  # keys files this process has asked the OS to read ahead


def _read_ahead(keys: Path) -> None:
    """Ask the OS to read the keys file in the background (free when it is cached), once per
    process and before sqlite opens it: closing a descriptor of a file drops every POSIX lock
    the process holds on it, sqlite's included (sqlite.org/howtocorrupt.html, 2.2). Done
    after the open, it dropped the lock that tells sqlite another process has the file open:
    a one-shot search closing its connection then took itself for the last one, folded and
    deleted the write-ahead log the server's search process was writing, and
    ``cq-v2-keys.sqlite3`` became "database disk image is malformed" within seconds."""
    if keys in _READ_AHEAD:
        return
    _READ_AHEAD.add(keys)
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(keys, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
        finally:
            os.close(fd)


def forget(db: sqlite3.Connection, ids: list[int]) -> None:
    """Delete entries by id with their usage rows and keys (inside a write transaction)."""
    rows = [(i,) for i in ids]
    db.executemany(
        "DELETE FROM k.keys WHERE id = ?1 AND hash = (SELECT hash FROM entries WHERE id = ?1)",
        rows,
    )
    db.executemany("DELETE FROM entries WHERE id = ?", rows)
    db.executemany("DELETE FROM usage WHERE id = ?", rows)


def pages(db: sqlite3.Connection) -> tuple[int, int]:
    """(pages in both files, free pages): header reads, whatever the cache holds."""
    total = free = 0
    for schema in ("main", "k"):
        total += db.execute(f"PRAGMA {schema}.page_count").fetchone()[0]
        free += db.execute(f"PRAGMA {schema}.freelist_count").fetchone()[0]
    return total, free
