"""A sqlite key-value store with namespaces whose cost per call does not grow with its size.

The layout is in ``schema.py`` (values under sequential ids, a separate small key index read
ahead at open, size and recency rows apart from the values), the bound in ``bound.py``
(page counts, eviction before each put on a per-search time budget, incremental vacuum),
compression in ``codec.py``, failures in ``faults.py``: every failure is a miss, with one
warning. Reads are one query per 500 keys; a put costs what it writes.

A put's cost does not grow with the cache (``python -m bench.cache_growth --part put``;
figures in ``bench/results/cache-figures.md``). The old store summed every row on each put and
kept blobs inline in the rows it walked.

Why not ``diskcache``: it read a search's keys many times slower (``python -m
bench.cache_growth --part diskcache``; ``bench/results/cache-figures.md``). Its ``get`` is one
query per key and, with the least-recently-used policy, a write per read; cq reads a search's
records in one batch, so that decides it. It also culls at most 10 rows per ``set`` (a
large write leaves it over its limit), has no namespaces and sets nothing aside when its
database is corrupt.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from cq.cache import bound, codec, faults, schema, sharing
from cq.cache.keys import storable
from cq.cache.place import DEFAULT_MAX_BYTES, cache_dir, max_bytes_from_env
from cq.cache.schema import FILE_NAME

_TOUCH_AFTER_SECONDS = 3600  # recency is kept to the hour: a read writes almost never
_BATCH = 500  # keys per read query

_F = TypeVar("_F", bound=Callable[..., Any])


class CacheSizes(msgspec.Struct, frozen=True):
    """What ``cq cache info`` shows: the bound and what the file and its entries take."""

    bound: int
    file_bytes: int
    wal_bytes: int
    free_bytes: int
    entries: int
    stored_bytes: int
    raw_bytes: int


def _guarded(default: Callable[[], Any]) -> Callable[[_F], _F]:
    """Run a method on the store's lock; any sqlite or OS failure becomes ``default()``."""

    def wrap(method: _F) -> _F:
        @wraps(method)
        def run(self: Store, *args: Any, **kwargs: Any) -> Any:
            with self._lock:
                if self._db is not None and self._replaced():
                    self._close()  # ``cq cache clear`` (or a user) removed the files
                    self._open()
                if self._db is None:
                    return default()
                try:
                    return method(self, *args, **kwargs)
                except faults.ERRORS as exc:
                    self._fault(exc)
                    return default()

        return run  # type: ignore[return-value]

    return wrap


def _key_hash(namespace: str, key: str) -> int:
    digest = hashlib.blake2b(f"{namespace}\0{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class Store:
    """Namespaced blobs in one sqlite file, its files within ``max_bytes`` (``open_store``
    gives it the database's share of the cache dir's bound). Every failure is a miss."""

    def __init__(
        self,
        path: Path,
        max_bytes: int = DEFAULT_MAX_BYTES,
        *,
        warn: bool = True,
        after_writer: bool = True,
    ):
        """``after_writer``: first wait for the writes another cq handed to a child as it
        ended (``cq.cache.handoff``), so what it stored is seen; its writer does not."""
        self.path = path
        self.max_bytes = max_bytes
        self.fault: str | None = None  # why the store is off
        self.notice: str | None = None  # the one warning (printed when ``warn``)
        self._warn_enabled = warn
        self._db: sqlite3.Connection | None = None
        self._held: int | None = None  # the shared lock on the store's files (``sharing``)
        self._inode = 0
        self._page_size = 4096
        self._pages_bound = bound.page_room(max_bytes)  # the WALs take the rest
        self._wal_bytes = bound.wal_room(max_bytes)
        self._budget = bound.Budget()
        self._lock = threading.Lock()
        self._retry = faults.Backoff()  # when a store that went off may be reopened
        # Writes kept for the end of this process (``keep_writes``): (namespace, key) -> value
        self._deferred: dict[tuple[str, str], bytes] = {}
        self._deferred_bytes = 0
        if after_writer:
            sharing.wait_for_writer(path)
        self._open()
        # Printed by the one-shot CLI (which hands off its own writes), not a child it forked
        # before (its stderr goes nowhere) nor a long-lived process (it may have none).
        if after_writer and warn and _closing is not None:
            left = sharing.take_notice(path)
            if left is not None:
                self._say(left)

    @property
    def available(self) -> bool:
        return self._db is not None

    # -- opening, faults ---------------------------------------------------------------

    def _open(self) -> None:
        try:
            faults.check_dir(self.path.parent)
            self._db = self._connect()
        except faults.ERRORS as exc:
            if not faults.is_corrupt(exc):
                self._disable(exc)
                return
            reason = faults.describe(exc, self.path)
            with sharing.alone(self.path) as alone:
                moved = faults.set_aside(schema.files(self.path)) if alone else None
            if moved is None:  # another cq has it open: the last one to find it alone moves it
                self._disable(exc)
                return
            self._say(f"cache database is corrupt ({reason}); moved it to {moved}, starting anew")
            try:
                self._db = self._connect()
            except faults.ERRORS as again:
                self._disable(again)

    def _connect(self) -> sqlite3.Connection:
        """The connection, holding the shared lock (``sharing``) for as long as it is open."""
        held = sharing.hold(self.path)
        try:
            db = schema.connect(self.path, self._wal_bytes)
            self._page_size = db.execute("PRAGMA page_size").fetchone()[0]
            self._inode = os.stat(self.path).st_ino
        except BaseException:
            sharing.let_go(held)
            raise
        self._held = held
        return db

    def _replaced(self) -> bool:
        """Whether the file at ``path`` is no longer the one open: a long-lived process
        would go on reading and writing an unlinked file that no other cq sees, its disk
        space held until the process ends. One stat per operation."""
        try:
            return os.stat(self.path).st_ino != self._inode
        except OSError:
            return True

    def _fault(self, exc: BaseException) -> None:
        """After a failed operation: roll back, then set a corrupt file aside or turn off."""
        assert self._db is not None
        with contextlib.suppress(sqlite3.Error):
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
        if faults.is_transient(exc):
            self.fault = faults.describe(exc, self.path)
            self._say(f"cache busy ({self.fault}); this search goes on without it")
            return
        self._close()
        if not faults.is_corrupt(exc):
            self._disable(exc)
            return
        moved = None
        with contextlib.suppress(OSError), sharing.alone(self.path) as alone:
            if not alone:  # another cq has it open: the last one to find it alone moves it
                self._disable(exc)
                return
            if os.stat(self.path).st_ino == self._inode:  # not already replaced by another cq
                moved = faults.set_aside(schema.files(self.path))
        where = f"; moved it to {moved}," if moved else ";"
        self._say(f"cache database {self.path} is corrupt{where} starting an empty one")
        try:
            faults.check_dir(self.path.parent)
            self._db = self._connect()
        except faults.ERRORS as again:
            self._disable(again)

    def _disable(self, exc: BaseException) -> None:
        self._db = None
        self.fault = faults.describe(exc, self.path)
        self._say(f"cache unavailable: {self.fault}; going on without it")
        self._retry.failed()

    def revive(self) -> None:
        """Reopen a store that went off, once its back-off has passed (``open_store`` asks
        at each use): a fault that passes does not keep a long-lived process uncached. A
        failed attempt waits twice as long and warns no more; a reopened store warns again
        at its next fault."""
        with self._lock:
            if self._db is not None or not self._retry.due():
                return
            self._open()
            if self._db is not None:
                self.fault = self.notice = None
                self._retry = faults.Backoff()

    def _say(self, message: str) -> None:
        if self.notice is None:
            self.notice = message
            if self._warn_enabled:
                faults.warn(message)

    def _close(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None
        sharing.let_go(self._held)  # after the connection: no file of it is open any more
        self._held = None

    # -- reads and writes --------------------------------------------------------------

    @_guarded(dict)
    def get_many(
        self, namespace: str, keys: Iterable[str], damaged: list[str] | None = None
    ) -> dict[str, bytes]:
        """The stored blobs among ``keys``; missing and damaged ones are absent (the keys of
        damaged ones, dropped from the store, are added to ``damaged``)."""
        assert self._db is not None
        found: dict[str, bytes] = {}
        if self._deferred:  # written by this process, not yet stored
            keys = list(keys)
            for key in keys:
                value = self._deferred.get((namespace, key))
                if value is not None:
                    found[key] = value
        hashes = {
            _key_hash(namespace, key): key
            for key in dict.fromkeys(keys)
            if storable(key) and key not in found
        }
        wanted = list(hashes)
        stale: list[int] = []
        broken: list[int] = []
        refresh_before = time.time() - _TOUCH_AFTER_SECONDS
        for i in range(0, len(wanted), _BATCH):
            chunk = wanted[i : i + _BATCH]
            # Casts: a damaged row may hold any type in any column; text comes back with
            # bad UTF-8 replaced (``schema.connect``), so it matches no key.
            rows = self._db.execute(
                "SELECT e.id, e.hash, e.namespace, e.key, e.codec, CAST(e.value AS BLOB),"
                " CAST(u.used AS INTEGER) FROM k.keys k"
                " JOIN entries e ON e.id = k.id AND e.hash = k.hash"
                f" LEFT JOIN usage u ON u.id = e.id WHERE k.hash IN ({','.join('?' * len(chunk))})",
                chunk,
            )
            for entry, hashed, space, key, kind, value, used in rows:
                if space != namespace or key != hashes.get(hashed):
                    continue  # another key with the same 64-bit id: a miss
                try:
                    found[key] = codec.decode(kind, bytes(value), codec.binding(namespace, key))
                except codec.CodecError:
                    broken.append(entry)
                    if damaged is not None:
                        damaged.append(key)
                    continue
                if used is None or used < refresh_before:
                    stale.append(entry)
        if stale or broken:
            self._touch(stale, broken)
        return found

    def _touch(self, stale: list[int], damaged: list[int]) -> None:
        """Refresh recency and drop damaged values; skipped when another writer holds the
        lock (a later read does it)."""
        assert self._db is not None
        self._db.execute("PRAGMA busy_timeout = 50")
        try:
            self._db.execute("BEGIN IMMEDIATE")
            now = int(time.time())
            self._db.executemany(
                "UPDATE usage SET used = ? WHERE id = ?", [(now, i) for i in stale]
            )
            schema.forget(self._db, damaged)
            self._db.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            if not faults.is_transient(exc):
                raise
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
        finally:
            self._db.execute("PRAGMA busy_timeout = 10000")

    @_guarded(lambda: None)
    def put_many(self, namespace: str, items: dict[str, bytes]) -> None:
        """Store blobs (replacing old ones), after evicting the least recently used entries
        worth what is written, once the file is at its bound; in a process that keeps its
        writes for its end (``keep_writes``), kept while they fit ``_DEFER_MAX_BYTES``."""
        if not items:
            return
        if _closing is not None:
            size = sum(len(value) for value in items.values())
            if self._deferred_bytes + size <= _DEFER_MAX_BYTES:
                for key, value in items.items():
                    replaced = self._deferred.get((namespace, key), b"")
                    self._deferred[(namespace, key)] = value
                    self._deferred_bytes += len(value) - len(replaced)
                return
        self._write_deferred()
        self._write(namespace, items)

    def _write_deferred(self) -> None:
        """Store the writes kept so far, in the order they were made."""
        by_namespace: dict[str, dict[str, bytes]] = {}
        for (namespace, key), value in self._deferred.items():
            by_namespace.setdefault(namespace, {})[key] = value
        self._deferred, self._deferred_bytes = {}, 0
        for namespace, items in by_namespace.items():
            self._write(namespace, items)

    def _write(self, namespace: str, items: dict[str, bytes]) -> None:
        assert self._db is not None
        now = int(time.time())
        rows = []
        for key, value in items.items():
            if not storable(key):
                continue
            kind, stored = codec.encode(value, codec.binding(namespace, key))
            rows.append((_key_hash(namespace, key), key, kind, stored, len(value)))
        costs = [len(row[3]) + bound.ROW_OVERHEAD for row in rows]
        kept = bound.fit(costs, self._pages_bound)
        rows, incoming = [rows[i] for i in kept], sum(costs[i] for i in kept)
        self._db.execute("BEGIN IMMEDIATE")
        bound.make_room(self._db, self._page_size, self._pages_bound, incoming, self._budget)
        self._forget_keys([row[0] for row in rows])
        usage, keys = [], []
        for hashed, key, kind, stored, raw in rows:  # new ids: appended at the file's end
            cursor = self._db.execute(
                "INSERT INTO entries (hash, namespace, key, codec, value) VALUES (?, ?, ?, ?, ?)",
                (hashed, namespace, key, kind, stored),
            )
            usage.append((cursor.lastrowid, namespace, len(stored), raw, now))
            keys.append((hashed, cursor.lastrowid))
        self._db.executemany("INSERT INTO usage VALUES (?, ?, ?, ?, ?)", usage)
        self._db.executemany("INSERT OR REPLACE INTO k.keys VALUES (?, ?)", keys)
        self._db.execute("COMMIT")
        bound.give_back(self._db, self._page_size, self._pages_bound, self._budget)
        bound.settle(self._db, self._page_size, self._pages_bound)
        databases = (self.path, self.path.with_name(schema.KEYS_NAME))
        bound.truncate_wal(self._db, [Path(f"{d}-wal") for d in databases], self._wal_bytes)

    @_guarded(lambda: None)
    def delete(self, namespace: str, key: str) -> None:
        assert self._db is not None
        self._deferred_bytes -= len(self._deferred.pop((namespace, key), b""))
        self._db.execute("BEGIN IMMEDIATE")
        self._forget_keys([_key_hash(namespace, key)])
        self._db.execute("COMMIT")

    def _forget_keys(self, hashes: list[int]) -> None:
        """Delete the entries stored under these key hashes (inside a write transaction)."""
        assert self._db is not None
        ids: list[int] = []
        for i in range(0, len(hashes), _BATCH):
            chunk = hashes[i : i + _BATCH]
            marks = ",".join("?" * len(chunk))
            ids += [
                row[0]
                for row in self._db.execute(f"SELECT id FROM k.keys WHERE hash IN ({marks})", chunk)
            ]
        if ids:
            schema.forget(self._db, ids)

    # -- maintenance -------------------------------------------------------------------

    @_guarded(dict)
    def info(self) -> dict[str, tuple[int, int]]:
        """namespace -> (entries, stored bytes)."""
        assert self._db is not None
        rows = self._db.execute(
            "SELECT namespace, COUNT(*), SUM(size) FROM usage GROUP BY namespace ORDER BY 1"
        )
        return {ns: (count, size) for ns, count, size in rows}

    @_guarded(lambda: None)
    def sizes(self) -> CacheSizes | None:
        """The bound, the file, its free pages, the WAL and the entries' bytes."""
        assert self._db is not None
        _, free = schema.pages(self._db)
        count, stored, raw = self._db.execute(
            "SELECT COUNT(*), COALESCE(SUM(size), 0), COALESCE(SUM(raw), 0) FROM usage"
        ).fetchone()
        paths = schema.files(self.path)
        return CacheSizes(
            bound=self.max_bytes,
            file_bytes=sum(_size(p) for p in paths if not p.name.endswith(("-wal", "-shm"))),
            wal_bytes=sum(_size(p) for p in paths if p.name.endswith("-wal")),
            free_bytes=free * self._page_size,
            entries=count,
            stored_bytes=stored,
            raw_bytes=raw,
        )

    @_guarded(lambda: None)
    def prune(self) -> None:
        """Bring the file under the bound now: evict, give every free page back, empty the
        WAL. Short transactions, so searches running meanwhile wait at most one batch."""
        assert self._db is not None
        self._db.execute("BEGIN IMMEDIATE")
        bound.make_room(self._db, self._page_size, self._pages_bound, 0, None)
        self._db.execute("COMMIT")
        bound.give_back(self._db, self._page_size, self._pages_bound, None)
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    @_guarded(lambda: None)
    def empty(self) -> None:
        """Delete every entry and give the pages back (``cq cache clear`` while another cq
        has the store open, when its files may not be removed: ``sharing``)."""
        assert self._db is not None
        self._db.execute("BEGIN IMMEDIATE")
        for table in ("entries", "usage", "k.keys"):
            self._db.execute(f"DELETE FROM {table}")
        self._db.execute("COMMIT")
        self._db.executescript("PRAGMA main.incremental_vacuum; PRAGMA k.incremental_vacuum;")
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    @_guarded(lambda: None)
    def write_deferred(self) -> None:
        """Store the writes this process kept for its end (``keep_writes``) now."""
        self._write_deferred()

    def take_deferred(self) -> dict[tuple[str, str], bytes]:
        """The writes kept for the end, taken away (``cq.cache.handoff`` writes them)."""
        with self._lock:
            taken, self._deferred, self._deferred_bytes = self._deferred, {}, 0
            return taken

    def put_taken(self, taken: dict[tuple[str, str], bytes]) -> None:
        """Store what ``take_deferred`` took (in the writer a store's last process hands
        them to)."""
        with self._lock:
            self._deferred.update(taken)
        self.write_deferred()

    def close(self) -> None:
        """Store the writes kept for the end, then close."""
        if self._deferred:
            self.write_deferred()
        with self._lock:
            self._close()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


_open_stores: dict[Path, Store] = {}


def open_store() -> Store:
    """The process's store for the current cache dir (one connection per path; a store
    that failed is off until its back-off passes, then reopened: ``Store.revive``)."""
    path = cache_dir() / FILE_NAME
    store = _open_stores.get(path)
    if store is None:
        if not _open_stores:
            atexit.register(close_stores)
        share = bound.database_share(max_bytes_from_env())
        store = _open_stores[path] = Store(path, share)
    elif not store.available:
        store.revive()
    return store


def close_stores() -> None:
    """Close the process's stores as it exits: the last connection to close folds the WAL
    back into the database and removes it and its shared memory. Left to the interpreter's
    exit, a connection held in a reference cycle is never closed once the CLI has frozen its
    objects (``cq.cli.dispatch.entry``), and every one-shot cq left both files behind,
    beside the sizes ``cq cache info`` counts. A process that keeps its writes for its end
    closes them the way ``keep_writes`` was told (``cq.cache.handoff``)."""
    stores = list(_open_stores.values())
    _open_stores.clear()
    if _closing is not None:
        _closing(stores)
        return
    for store in stores:
        store.close()


def keep_writes(closing: Callable[[list[Store]], None]) -> None:
    """Keep this process's cache writes for its end, where ``closing`` gets its stores
    (``cq.cache.handoff.defer_writes``: the one-shot CLI's search)."""
    global _closing
    _closing = closing


_closing: Callable[[list[Store]], None] | None = None  # set: writes are kept for the end
# What a process keeps for its end at most (the rest is written as it comes): an audit
# search's records would otherwise all stay in memory (``ScaleTuning.corpus_keep_bytes``'s
# measurement: 163 MB peak); a cold 'get' on the stdlib keeps 1.3 MB (hand-set above it).
_DEFER_MAX_BYTES = 16 * 1024 * 1024
