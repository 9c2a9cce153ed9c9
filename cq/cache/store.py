"""A small sqlite key-value store with namespaces, LRU eviction and corruption recovery."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

_DEFAULT_MAX_BYTES = 512 * 1024 * 1024
_TOUCH_AFTER_SECONDS = 3600
_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    value BLOB NOT NULL,
    size INTEGER NOT NULL,
    used REAL NOT NULL,
    PRIMARY KEY (namespace, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entries_used ON entries(used);
"""


_F = TypeVar("_F", bound=Callable[..., Any])


def _locked(method: _F) -> _F:
    """Serialise a method on the store's lock (one sqlite connection shared by threads)."""

    @wraps(method)
    def run(self: Store, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return run  # type: ignore[return-value]


def cache_dir() -> Path:
    """``CQ_CACHE_DIR``, else ``$XDG_CACHE_HOME/cq``, else ``~/.cache/cq``."""
    explicit = os.environ.get("CQ_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "cq" if xdg else Path.home() / ".cache" / "cq"


class Store:
    """Namespaced blobs in one sqlite file. Every failure degrades to a cache miss."""

    def __init__(self, path: Path, max_bytes: int = _DEFAULT_MAX_BYTES) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        try:
            self._db = self._connect()
        except sqlite3.DatabaseError:
            self._set_aside()
            try:
                self._db = self._connect()
            except sqlite3.Error:
                self._db = None

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # One connection per process, usable from any thread (the MCP server's workers).
        db = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(_SCHEMA)
        return db

    def _set_aside(self) -> None:
        """Move a corrupt database out of the way (kept for inspection, then replaced)."""
        for suffix in ("", "-wal", "-shm"):
            victim = Path(str(self.path) + suffix)
            if victim.exists():
                victim.replace(Path(str(self.path) + suffix + ".corrupt"))

    @property
    def available(self) -> bool:
        return self._db is not None

    @_locked
    def get_many(self, namespace: str, keys: Iterable[str]) -> dict[str, bytes]:
        """The stored blobs among ``keys``; missing and unreadable ones are simply absent."""
        if self._db is None:
            return {}
        wanted = list(dict.fromkeys(keys))
        found: dict[str, bytes] = {}
        stale: list[str] = []
        refresh_before = time.time() - _TOUCH_AFTER_SECONDS
        try:
            for i in range(0, len(wanted), 500):
                chunk = wanted[i : i + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT key, value, used FROM entries WHERE namespace=? AND key IN ({marks})",
                    (namespace, *chunk),
                )
                for key, value, used in rows:
                    found[key] = bytes(value)
                    if used < refresh_before:
                        stale.append(key)
            if stale:  # LRU order only needs coarse timestamps: touch rarely
                now = time.time()
                self._db.executemany(
                    "UPDATE entries SET used=? WHERE namespace=? AND key=?",
                    [(now, namespace, key) for key in stale],
                )
        except sqlite3.Error:
            return found
        return found

    @_locked
    def put_many(self, namespace: str, items: dict[str, bytes]) -> None:
        """Store blobs (replacing old ones), then evict the least recently used past the bound."""
        if self._db is None or not items:
            return
        now = time.time()
        try:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(
                "INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?)",
                [(namespace, k, v, len(v), now) for k, v in items.items()],
            )
            self._db.execute("COMMIT")
            self._evict()
        except sqlite3.Error:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")

    def _evict(self) -> None:
        assert self._db is not None
        (total,) = self._db.execute("SELECT COALESCE(SUM(size), 0) FROM entries").fetchone()
        if total <= self.max_bytes:
            return
        excess = total - int(self.max_bytes * 0.8)
        rows = self._db.execute("SELECT namespace, key, size FROM entries ORDER BY used")
        victims: list[tuple[str, str]] = []
        for namespace, key, size in rows:
            victims.append((namespace, key))
            excess -= size
            if excess <= 0:
                break
        self._db.executemany("DELETE FROM entries WHERE namespace=? AND key=?", victims)

    @_locked
    def delete(self, namespace: str, key: str) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute(
                    "DELETE FROM entries WHERE namespace=? AND key=?", (namespace, key)
                )

    @_locked
    def info(self) -> dict[str, tuple[int, int]]:
        """namespace -> (entries, bytes)."""
        if self._db is None:
            return {}
        rows = self._db.execute(
            "SELECT namespace, COUNT(*), SUM(size) FROM entries GROUP BY namespace ORDER BY 1"
        )
        return {ns: (count, size) for ns, count, size in rows}

    @_locked
    def clear(self) -> None:
        if self._db is not None:
            self._db.execute("DELETE FROM entries")
            self._db.execute("VACUUM")

    @_locked
    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


_open: dict[Path, Store] = {}


def open_store() -> Store:
    """The process's store for the current cache dir (one connection per path)."""
    path = cache_dir() / "cq.sqlite3"
    store = _open.get(path)
    if store is None or not store.available:
        store = _open[path] = Store(path)
    return store
