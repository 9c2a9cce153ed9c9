"""Keeping the cache file at its bound: eviction and giving pages back, in bounded time.

The bound covers every file of the store: both databases, their write-ahead logs and
shared-memory files. The WAL gets a room of its own (1/16 of the bound, at most 4 MB, at
least 64 KB): sqlite checkpoints it into the database at that size and a put that leaves it
larger truncates it (``wal_checkpoint(TRUNCATE)``) before the search goes on, and the
databases' pages keep to what is left (``page_room``). A put larger than that room stores
its smallest values only. The pages are counted from the database headers (two reads),
never by summing rows. Before a put writes, entries are evicted least recently used first,
in batches of 32, while the search's eviction time budget lasts; past 108% of the bound
eviction no longer waits for budget, so the files never pass 110% while a put costs in
proportion to what it writes. A file more than 2% over its bound with free pages (the
bound was lowered) returns them with ``incremental_vacuum`` on the same budget; ``cq cache
prune`` returns all of them.

Tuned with ``python -m bench.cache_growth --part bound`` (figures in
bench/results/2026-11-27-bench-log.md).
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from cq.cache.faults import is_transient
from cq.cache.schema import forget, pages

# s a search may spend evicting; the target is < 50 ms a search, and a 300-entry put at the
# bound measured 34 ms (hot) / 40 ms (dropped) over the same put far from it (bench, --part bound)
EVICT_BUDGET = 0.030
_REFILL = 0.003  # s of budget regained per s of wall time (a server's next search)
_HARD = 1.08  # past this share, evict whatever it costs: the target is <= 110% after a search
_SLACK = 0.005  # evict to 99.5% (2.5 MB at 512 MB: the next puts of a search evict nothing)
_BATCH = 32  # victims per DELETE round, between budget checks: 256 cold ones overran it
_VACUUM_STEP = 32  # pages per incremental_vacuum call, between budget checks (cold pages)
_SHRINK_AT = 1.02  # a search gives pages back only past this share of the bound: at the
# bound, evicted pages are reused by the next put; moving them each search cost 50-900 ms
ROW_OVERHEAD = 64  # bytes a row costs beyond its value (cell header, usage row, index)
WAL_MAX = 4 * 1024 * 1024  # a WAL's room at most (sqlite's default checkpoint, 1000 pages)
_WAL_MIN = 64 * 1024  # ... and at least: at a 1 MB bound a checkpoint every ~16 pages written
_WAL_SHARE = 16  # ... else this fraction of the bound
SHARED_MEMORY = 2 * 32 * 1024  # the two -shm files (one 32 KB block each for such WALs)


def database_share(total: int) -> int:
    """The database's part of the cache dir's bound (``footprint.py`` says why half)."""
    return total // 2


def others_share(total: int) -> int:
    """The part the repository indexes, embedding vectors and Pyrefly's scratch share
    (``footprint.py``)."""
    return total - database_share(total)


def wal_room(bound: int) -> int:
    """Bytes a WAL may keep between writes."""
    return min(WAL_MAX, max(_WAL_MIN, bound // _WAL_SHARE))


def page_room(bound: int) -> int:
    """Bytes the databases' pages may take so that they, the WALs and the shared memory
    files together stay within ``bound``."""
    return max(bound // 2, bound - wal_room(bound) - SHARED_MEMORY)


def fit(sizes: list[int], room: int) -> list[int]:
    """Indexes into ``sizes`` (bytes each item costs) to store: all when they fit into
    ``room``, else the smallest ones that do (a put never pushes the file past its bound)."""
    if sum(sizes) <= room:
        return list(range(len(sizes)))
    kept, total = [], 0
    for i in sorted(range(len(sizes)), key=sizes.__getitem__):
        if total + sizes[i] > room:
            break
        kept.append(i)
        total += sizes[i]
    return sorted(kept)


class Budget:
    """Eviction time a process may spend now: ``EVICT_BUDGET`` when fresh, spent by
    evicting, regained slowly, so each one-shot search (one process) and each search of a
    long-lived MCP server pays at most about ``EVICT_BUDGET``."""

    def __init__(self) -> None:
        self.left = EVICT_BUDGET
        self._at = time.monotonic()

    def deadline(self) -> float:
        now = time.monotonic()
        self.left = min(EVICT_BUDGET, self.left + (now - self._at) * _REFILL)
        self._at = now
        return now + self.left

    def spend(self, since: float) -> None:
        self.left = max(0.0, self.left - (time.monotonic() - since))


def make_room(
    db: sqlite3.Connection, page_size: int, bound: int, incoming: int, budget: Budget | None
) -> int:
    """Evict so that ``incoming`` more bytes fit (inside a write transaction; all that is
    over without a ``budget``); returns the bytes evicted."""
    total, free = pages(db)
    live = (total - free) * page_size
    if live + incoming <= bound:
        return 0
    goal = live + incoming - int(bound * (1 - _SLACK))
    must = live + incoming - int(bound * _HARD)
    start = time.monotonic()
    deadline = budget.deadline() if budget else float("inf")
    freed = 0
    while freed < goal and (freed < must or time.monotonic() < deadline):
        rows = db.execute("SELECT id, size FROM usage ORDER BY used, id LIMIT ?", (_BATCH,))
        victims = []
        for entry, size in rows:
            victims.append(entry)
            freed += size + ROW_OVERHEAD
            if freed >= goal:
                break
        if not victims:
            break
        forget(db, victims)
    if budget:
        budget.spend(start)
    return freed


def settle(db: sqlite3.Connection, page_size: int, bound: int) -> None:
    """After a put whose values took more pages than their estimate (a 3 KB value fills
    most of a page alone): past ``_HARD`` x ``bound``, evict and give pages back to the bound
    now, whatever it costs (outside a transaction)."""
    total, _ = pages(db)
    if total * page_size <= bound * _HARD:
        return
    db.execute("BEGIN IMMEDIATE")
    make_room(db, page_size, bound, 0, None)
    db.execute("COMMIT")
    give_back(db, page_size, bound, None)


def give_back(db: sqlite3.Connection, page_size: int, bound: int, budget: Budget | None) -> int:
    """Return free pages to the file system while the file is over ``bound`` (all of them
    without a ``budget``); returns how many. Outside a transaction: ``executescript`` steps
    the pragma to its end (``execute`` would free one page)."""
    total, free = pages(db)
    if budget and (not free or total * page_size <= bound * _SHRINK_AT):
        return 0
    start = time.monotonic()
    deadline = budget.deadline() if budget else float("inf")
    given = 0
    while True:
        total, free = pages(db)
        over = total * page_size - bound
        if over <= 0 or not free:
            break
        if total * page_size <= bound * _HARD and time.monotonic() >= deadline:
            break
        step = min(free, over // page_size + 1, _VACUUM_STEP)
        for schema in ("main", "k"):
            (spare,) = db.execute(f"PRAGMA {schema}.freelist_count").fetchone()
            if spare:
                db.executescript(f"PRAGMA {schema}.incremental_vacuum({min(step, spare)});")
        given += step
    if budget:
        budget.spend(start)
    return given


def truncate_wal(db: sqlite3.Connection, logs: list[Path], room: int) -> None:
    """Fold WALs that outgrew their ``room`` back into their databases and empty them (the
    bound counts them); left for a later put while another process reads the file."""
    if all(_size(log) <= room for log in logs):
        return
    db.execute("PRAGMA busy_timeout = 50")
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.OperationalError as exc:
        if not is_transient(exc):
            raise
    finally:
        db.execute("PRAGMA busy_timeout = 10000")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
