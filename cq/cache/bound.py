"""Keeping the cache file at its bound: eviction and giving pages back, in bounded time.

The bound is checked against the database's page counts (two header reads), never by summing
rows. Before a put writes, entries are evicted least recently used first, in batches of 32,
while the search's eviction time budget lasts; past 108% of the bound eviction no longer
waits for budget, so the file never passes 110% while a put costs in proportion to what it
writes. A file more than 2% over its bound with free pages (the bound was lowered) returns
them with ``incremental_vacuum`` on the same budget; ``cq cache prune`` returns all of them.

Tuned with ``python -m bench.cache_growth --part bound`` (figures in
bench/results/2026-11-27-bench-log.md).
"""

from __future__ import annotations

import sqlite3
import time

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
