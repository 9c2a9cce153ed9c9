"""Embeddings on disk: one SQLite file per model in cq's cache dir, vectors keyed by content.

``<cache dir>/embed/<model>/vectors.sqlite`` holds three tables:

- ``vec``: the embedded text's hash -> float32 vector. Keyed by content, not by place, so a
  unit that did not change is never embedded again (nor one that moved, nor the same code in
  another checkout of the repository).
- ``unit``: per root, each code unit of each indexed file (path, qualified name, kind, line)
  and the hash of its text; ``file``: per root, the content digest each file's units were
  taken from (the index's manifest digest), so a build re-scans only files that changed.
- ``seen``: per root, the index manifest's mtime the last finished build worked from; a
  search compares it to ask for a build only when the index moved.

WAL mode: the background build writes while searches read. A search reads only what was
committed; units whose vector is not there yet are simply not ranked.

A name that is not UTF-8 (its bytes read as lone surrogates) is text sqlite cannot hold: a
root is keyed by ``root_key`` (its bytes in hex), and a file is not recorded, so its units
are not ranked either.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import msgspec

from cq.cache.keys import root_key, storable
from cq.cache.place import vectors_path

SCHEMA = """
CREATE TABLE IF NOT EXISTS vec (key TEXT PRIMARY KEY, v BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS file (root TEXT, path TEXT, digest TEXT, PRIMARY KEY (root, path));
CREATE TABLE IF NOT EXISTS unit (
    root TEXT, path TEXT, qualname TEXT, kind TEXT, line INT, key TEXT
);
CREATE INDEX IF NOT EXISTS unit_root ON unit (root, path);
CREATE TABLE IF NOT EXISTS seen (root TEXT PRIMARY KEY, manifest_ns INT);
"""


class UnitRef(msgspec.Struct, frozen=True, array_like=True):
    """One embedded code unit of a root: where it is and the key of its vector."""

    path: str
    qualname: str
    kind: str
    line: int
    key: str


def store_path(model: str) -> Path:
    """Where the vectors live (``cq.cache.place`` owns the cache dir's layout: ``cq cache``
    counts, bounds and clears them there)."""
    return vectors_path(model)


class Store:
    """The vectors of one model. ``readonly`` opens nothing that is not there yet (a search)."""

    def __init__(self, model: str, *, readonly: bool = False) -> None:
        path = store_path(model)
        if readonly:
            self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(str(path), timeout=60)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    def files(self, root: str) -> dict[str, str]:
        """path -> digest of the files whose units are recorded."""
        rows = self.db.execute("SELECT path, digest FROM file WHERE root = ?", (root_key(root),))
        return dict(rows)

    def missing(self, keys: list[str]) -> list[str]:
        """The keys of ``keys`` without a vector, in their order, once each."""
        have: set[str] = set()
        unique = list(dict.fromkeys(keys))
        for i in range(0, len(unique), 500):
            chunk = unique[i : i + 500]
            marks = ",".join("?" * len(chunk))
            have.update(
                r[0] for r in self.db.execute(f"SELECT key FROM vec WHERE key IN ({marks})", chunk)
            )
        return [k for k in unique if k not in have]

    def vectors(self, keys: list[str]) -> dict[str, Any]:
        """key -> vector of the stored ones of ``keys``."""
        import numpy as np

        out: dict[str, Any] = {}
        unique = list(dict.fromkeys(keys))
        for i in range(0, len(unique), 500):
            chunk = unique[i : i + 500]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT key, v FROM vec WHERE key IN ({marks})"
            for k, v in self.db.execute(query, chunk):
                out[k] = np.frombuffer(v, dtype=np.float32)
        return out

    def put_vectors(self, keys: list[str], vectors: Any) -> None:
        rows = [(k, v.astype("float32").tobytes()) for k, v in zip(keys, vectors, strict=True)]
        with self.db:
            self.db.executemany("INSERT OR IGNORE INTO vec VALUES (?, ?)", rows)

    def put_files(self, root: str, files: dict[str, tuple[str, list[UnitRef]]]) -> None:
        """Record each file's digest and units (replacing what was recorded for it)."""
        root = root_key(root)
        with self.db:
            for path, (digest, units) in files.items():
                if not storable(path):
                    continue
                self.db.execute("DELETE FROM unit WHERE root = ? AND path = ?", (root, path))
                self.db.executemany(
                    "INSERT INTO unit VALUES (?, ?, ?, ?, ?, ?)",
                    [(root, u.path, u.qualname, u.kind, u.line, u.key) for u in units],
                )
                self.db.execute(
                    "INSERT OR REPLACE INTO file VALUES (?, ?, ?)", (root, path, digest)
                )

    def drop_files(self, root: str, paths: list[str]) -> None:
        root = root_key(root)
        with self.db:
            for path in filter(storable, paths):
                self.db.execute("DELETE FROM unit WHERE root = ? AND path = ?", (root, path))
                self.db.execute("DELETE FROM file WHERE root = ? AND path = ?", (root, path))

    def seen(self, root: str) -> int:
        key = root_key(root)
        row = self.db.execute("SELECT manifest_ns FROM seen WHERE root = ?", (key,)).fetchone()
        return int(row[0]) if row else 0

    def mark_seen(self, root: str, manifest_ns: int) -> None:
        with self.db:
            self.db.execute(
                "INSERT OR REPLACE INTO seen VALUES (?, ?)", (root_key(root), manifest_ns)
            )

    def units(self, root: str) -> int:
        key = root_key(root)
        row = self.db.execute("SELECT COUNT(*) FROM unit WHERE root = ?", (key,)).fetchone()
        return int(row[0])

    def pending(self, root: str) -> int:
        """Units of ``root`` whose vector is not stored yet."""
        row = self.db.execute(
            "SELECT COUNT(*) FROM unit u LEFT JOIN vec v ON v.key = u.key"
            " WHERE u.root = ? AND v.key IS NULL",
            (root_key(root),),
        ).fetchone()
        return int(row[0])

    def matrix(self, root: str, paths: list[str]) -> tuple[list[UnitRef], Any]:
        """The embedded units of ``paths`` of ``root`` and their vectors, one row each, in
        (path, line, name) order."""
        import numpy as np

        rows: list[tuple[Any, ...]] = []
        root = root_key(root)
        unique = sorted(filter(storable, set(paths)))
        for i in range(0, len(unique), 500):
            chunk = unique[i : i + 500]
            marks = ",".join("?" * len(chunk))
            rows += self.db.execute(
                "SELECT u.path, u.qualname, u.kind, u.line, u.key, v.v FROM unit u"
                f" JOIN vec v ON v.key = u.key WHERE u.root = ? AND u.path IN ({marks})",
                [root, *chunk],
            ).fetchall()
        rows.sort(key=lambda r: (r[0], r[3], r[1]))
        refs = [UnitRef(*r[:5]) for r in rows]
        if not rows:
            return refs, np.zeros((0, 0), dtype=np.float32)
        return refs, np.vstack([np.frombuffer(r[5], dtype=np.float32) for r in rows])
