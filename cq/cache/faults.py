"""What a cache failure means and what to tell the user: one warning line, then misses.

A search never fails because of its cache. A corrupt database is set aside (kept as
``*.corrupt`` for inspection) and replaced by an empty one; a cache dir that cannot be
created, opened or written turns the store off, and it is reopened with a back-off (a
long-lived ``cq mcp`` gets its cache back once the fault passes); a lock held too long by
another process costs one miss. Each store prints at most one warning per outage.
"""

from __future__ import annotations

import contextlib
import sqlite3
import sys
import time
from pathlib import Path

# sqlite primary result codes (https://www.sqlite.org/rescode.html)
_BUSY, _LOCKED, _CORRUPT, _NOTADB = 5, 6, 11, 26

# What a store operation may raise; each becomes a miss. ``UnicodeError``: sqlite's message
# about a damaged schema names the damaged bytes, which Python cannot decode.
ERRORS = (sqlite3.Error, OSError, UnicodeError)


class NotACache(sqlite3.DatabaseError):
    """A readable sqlite file that is not a cq v2 cache: set aside like a corrupt one."""


class Backoff:
    """When a store that went off may be opened again: 1 s after the first failure, then 2,
    4, ... at most 5 min apart (hand-set: a long-lived ``cq mcp`` gets its cache back soon
    after a passing fault, and a lasting one costs one failed open per interval)."""

    FIRST_SECONDS, MAX_SECONDS = 1.0, 300.0

    def __init__(self) -> None:
        self.delay = self.FIRST_SECONDS
        self.at: float | None = None  # None: nothing failed yet

    def failed(self) -> None:
        self.at = time.monotonic() + self.delay
        self.delay = min(2 * self.delay, self.MAX_SECONDS)

    def due(self) -> bool:
        return self.at is not None and time.monotonic() >= self.at


def is_corrupt(exc: BaseException) -> bool:
    """A damaged database file (rather than a locked, unreadable or missing one)."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    return isinstance(exc, (NotACache, UnicodeDecodeError)) or code in (_CORRUPT, _NOTADB)


def is_transient(exc: BaseException) -> bool:
    """Another process held the lock past the busy timeout: worth trying again later."""
    return getattr(exc, "sqlite_errorcode", 0) & 0xFF in (_BUSY, _LOCKED)


def describe(exc: BaseException, path: Path) -> str:
    """A short reason: ``OSError`` strerror plus its path, or sqlite's message plus ``path``."""
    if isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        return f"{exc.strerror or exc}{where}"
    if isinstance(exc, UnicodeDecodeError):
        return f"damaged text in the database ({path})"
    return f"{exc or type(exc).__name__} ({path})"


def warn(message: str) -> None:
    """One line on stderr; never raises (stderr may be closed under an agent)."""
    with contextlib.suppress(OSError, ValueError):
        print(f"cq: warning: {message}", file=sys.stderr, flush=True)


def set_aside(paths: list[Path]) -> Path:
    """Move a corrupt store's files out of the way (``*.corrupt``, kept for inspection);
    returns where the first one went."""
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.replace(Path(f"{path}.corrupt"))
    return Path(f"{paths[0]}.corrupt")


def misplaced(directory: Path) -> str | None:
    """Why ``directory`` can never be a cache dir (it or a parent is a file), else None."""
    for path in (directory, *directory.parents):
        if path.exists():
            if path.is_dir():
                return None
            what = "is a file" if path == directory else f"is below a file ({path})"
            return f"cache dir {directory} {what}"
    return None


def check_dir(directory: Path) -> None:
    """Create the cache dir; ``NotADirectoryError`` saying why when it or a parent is a file."""
    if reason := misplaced(directory):
        raise NotADirectoryError(20, reason)
    directory.mkdir(parents=True, exist_ok=True)
