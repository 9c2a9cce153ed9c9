"""What the server's processes take: resident memory read from ``/proc``, and the bound that
recycles a search process.

The server is the daemon (small: it imports nothing of the search path), its search
processes (``worker.py``, with their classification workers) and the Pyrefly servers those
start. ``cq server status`` shows the three (``Memory``). A search process's own resident
size is what grows with the roots it serves (imports, parse caches, opened indexes, the
allocator's arenas, which Python rarely hands back); past ``worker_max_rss()`` after a search,
or after ``WORKER_MAX_ROOTS`` roots, it retires and a fresh one takes its place, as
gunicorn's ``max_requests`` recycles a worker between requests, never during one.
Standard library only.
"""

from __future__ import annotations

import contextlib
import os

import msgspec

# A search process past this resident size after a search retires (hand-set against the
# bench: bench/server_memory.py keeps the search process under 600 MB over 40 roots; a warm
# process after one search on a 1,000-file tree is ~250-350 MB). CQ_SERVER_PROCESS_MAX_MB
# sets another bound (``worker_max_rss``).
WORKER_MAX_RSS_MB = 450
# ... or once it has served this many roots (hand-set: bench/server_memory.py; the state kept
# per root is bounded one by one, but the allocator's arenas grow with the variety of trees).
WORKER_MAX_ROOTS = 12
# A search process idle this long is ended; the daemon stays (hand-set: a pause in a burst of
# an agent's searches is seconds; after a minute the next search pays one process start,
# ~1 s, and the memory goes back: bench/server_memory.py, <= 400 MB 120 s after the last search).
WORKER_IDLE_S = 60.0

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class Memory(msgspec.Struct, frozen=True):
    """Resident bytes of the server's parts (``cq server status``)."""

    daemon: int
    workers: int  # the search processes and their classification workers
    pyrefly: int  # the Pyrefly servers the search processes started


def worker_max_rss() -> int:
    """The resident bytes past which a search process retires after its search."""
    from cq.env import env_int  # only when a search has run: it costs msgspec's import

    return env_int("CQ_SERVER_PROCESS_MAX_MB", WORKER_MAX_RSS_MB) * 1024 * 1024


def rss(pid: int) -> int:
    """Resident bytes of ``pid`` (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (children of each of its threads, recursively)."""
    found: list[int] = []
    pending = [pid]
    while pending:
        parent = pending.pop()
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{parent}/task"):
                with contextlib.suppress(OSError, ValueError):
                    with open(f"/proc/{parent}/task/{task}/children", "rb") as fh:
                        children = [int(c) for c in fh.read().split()]
                    found += children
                    pending += children
    return found


def _is_pyrefly(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/comm", "rb") as fh:
            return fh.read().strip().startswith(b"pyrefly")
    except OSError:
        return False


def measure(workers: list[int]) -> Memory:
    """The daemon's (this process's) and ``workers``' memory, Pyrefly counted apart."""
    worker_bytes = pyrefly_bytes = 0
    for pid in workers:
        worker_bytes += rss(pid)
        for child in descendants(pid):
            if _is_pyrefly(child):
                pyrefly_bytes += rss(child)
            else:
                worker_bytes += rss(child)
    return Memory(daemon=rss(os.getpid()), workers=worker_bytes, pyrefly=pyrefly_bytes)
