"""Synthetic cq caches for ``cache_growth.py``: filled to a size, in either store format.

Values are slices of real Python source (the stdlib), so they compress like cq's records
(about 3x with zstd); sizes follow a real cache's mix (most records under 1 KB, some tens of
KB, a few megabyte vocabularies). Namespaces start with ``bench-`` so a bench can tell its
filler from what a search wrote and delete the latter to make the next search cold again.
"""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from bench._common import stdlib_dir

# (namespace, raw value size, share of entries): an average of ~2.9 KB raw per entry, the
# mix of the cache the issue describes (350,000 entries, 506 MB).
MIX = (
    ("bench-records", 600, 0.60),
    ("bench-enrich", 2_000, 0.30),
    ("bench-symbols", 12_000, 0.09),
    ("bench-records", 80_000, 0.0099),
    ("bench-vocabulary", 4_000_000, 0.0001),
)
LEGACY_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    namespace TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL,
    size INTEGER NOT NULL, used REAL NOT NULL, PRIMARY KEY (namespace, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entries_used ON entries(used);
"""


def corpus(limit: int = 64 * 1024 * 1024) -> bytes:
    """Up to ``limit`` bytes of stdlib source, the text synthetic values are cut from."""
    parts, total = [], 0
    for path in sorted(Path(stdlib_dir()).rglob("*.py")):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        parts.append(data)
        total += len(data)
        if total >= limit:
            break
    return b"".join(parts)


def synthetic(rng: random.Random, text: bytes, count: int) -> list[tuple[str, str, bytes]]:
    """``count`` (namespace, key, value) triples drawn from ``MIX``."""
    weights = [share for _, _, share in MIX]
    out = []
    for kind in rng.choices(range(len(MIX)), weights=weights, k=count):
        namespace, size, _ = MIX[kind]
        size = max(64, int(size * rng.uniform(0.5, 1.5)))
        start = rng.randrange(0, len(text) - size)
        out.append((namespace, f"{rng.getrandbits(128):032x}", text[start : start + size]))
    return out


def is_legacy(cq_dir: Path) -> bool:
    """A cq checkout from before the v2 store (one table, blobs inline, ``cq.sqlite3``)."""
    return not (cq_dir / "cq" / "cache" / "codec.py").exists()


def db_path(cache: Path, cq_dir: Path) -> Path:
    return cache / ("cq.sqlite3" if is_legacy(cq_dir) else "cq-v2.sqlite3")


def fill(cache: Path, cq_dir: Path, target_bytes: int, seed: int = 1) -> int:
    """Grow the cache's database file to ``target_bytes``; returns the entries added."""
    cache.mkdir(parents=True, exist_ok=True)
    rng, text, added = random.Random(seed), corpus(), 0
    path = db_path(cache, cq_dir)
    if is_legacy(cq_dir):
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript(LEGACY_SCHEMA)
        while _file_size(path) < target_bytes:
            rows = synthetic(rng, text, 2000)
            db.execute("BEGIN")
            db.executemany(
                "INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?)",
                [(ns, k, v, len(v), time.time() - 86400) for ns, k, v in rows],
            )
            db.execute("COMMIT")
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            added += len(rows)
        db.close()
        return added
    sys.path.insert(0, str(cq_dir))
    from cq.cache.store import Store

    store = Store(path, max_bytes=1 << 40)
    while _file_size(path) < target_bytes:
        by_namespace: dict[str, dict[str, bytes]] = {}
        for ns, key, value in synthetic(rng, text, 2000):
            by_namespace.setdefault(ns, {})[key] = value
        for ns, items in by_namespace.items():
            store.put_many(ns, items)
            added += len(items)
        checkpoint(path)
    store.close()
    backdate(path, cq_dir)
    return added


def backdate(path: Path, cq_dir: Path) -> None:
    """Make the filler a day old, so what a search writes or reads is the most recent."""
    db = sqlite3.connect(path, isolation_level=None, timeout=30)
    table = "entries" if is_legacy(cq_dir) else "usage"
    db.execute(f"UPDATE {table} SET used = used - 86400 WHERE namespace LIKE 'bench-%'")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def forget_searches(path: Path, cq_dir: Path) -> None:
    """Delete every entry a search wrote (the filler stays): the next search is cold."""
    if not path.exists():
        return
    db = sqlite3.connect(path, isolation_level=None, timeout=30)
    db.execute("DELETE FROM entries WHERE namespace NOT LIKE 'bench-%'")
    if not is_legacy(cq_dir):
        db.execute("DELETE FROM usage WHERE namespace NOT LIKE 'bench-%'")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def checkpoint(path: Path) -> None:
    db = sqlite3.connect(path, isolation_level=None, timeout=30)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def drop_from_page_cache(path: Path) -> None:
    """Evict the database (and its WAL) from the OS page cache: the next process reads it
    from disk. ``posix_fadvise(DONTNEED)`` needs no privileges, unlike drop_caches."""
    for suffix in ("", "-wal", "-shm"):
        try:
            fd = os.open(f"{path}{suffix}", os.O_RDONLY)
        except OSError:
            continue
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def in_cq(cq_dir: Path, code: str, env: dict[str, str] | None = None) -> str:
    """Run Python ``code`` in a fresh process that imports cq from ``cq_dir``."""
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cq_dir,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
