"""Who has the store open: the only processes allowed to remove or rename its files are
those that know nobody else has it open.

sqlite keeps its databases sound across processes as long as nobody moves the files under
it: a database and its write-ahead log are paired by name only, so a process that opens a
new ``cq-v2.sqlite3`` beside an old ``-wal`` replays the old pages into the new file, and a
process still holding an unlinked file writes into nothing (``attempt to write a readonly
database``). ``cq cache clear`` and the set-aside of a corrupt store did exactly that while
the server's search processes and one-shot searches had the files open.

So every ``Store`` holds a shared ``flock`` on ``cq-v2.lock`` (in the cache dir, never
removed) from before its connection opens until after it closes, and a process that wants
to remove or rename the store's files takes the lock exclusively, without waiting: held, no
other process has the files open, and none can open them until the files are gone. Not
held, the caller leaves the files where they are (``cq cache clear`` empties the store
through sqlite instead; a corrupt store is set aside by whichever process finds it alone).
``flock``, not ``fcntl`` record locks: closing some other descriptor of the file does not
drop it, and a child process gets none (the descriptor is close-on-exec).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

LOCK_NAME = "cq-v2.lock"
WRITER_LOCK_NAME = "cq-v2.writer.lock"  # held by a one-shot cq's writer (``cq.cache.handoff``)
NOTICE_NAME = "cq-v2.writer.notice"  # a writer's warning, for the next cq to print
_NOTICE_CHARS = 500  # a warning is one line: an error's text and a path (hand-set)
# An opener waits this long for a removal to finish (renames and unlinks: milliseconds); a
# lock still held exclusively after it costs this search its cache (hand-set).
_WAIT_S = 2.0
_PAUSE_S = 0.01
# An opener waits this long for the writer a one-shot cq left (tens of milliseconds; a
# loaded machine's scheduler may hold it back for more): hand-set
_WRITER_WAIT_S = 5.0


class Busy(OSError):
    """The store's files are being removed or renamed by another process right now."""


def hold_writer(database: Path) -> int | None:
    """A descriptor holding ``WRITER_LOCK_NAME`` exclusively, for the child a one-shot cq
    hands its writes to (``cq.cache.handoff``): every store opened meanwhile waits for its
    end (``wait_for_writer``). None when another writer holds it (the caller writes itself)."""
    try:
        fd = _open(database, WRITER_LOCK_NAME)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def leave_notice(database: Path, message: str) -> None:
    """Leave the warning of a writer, which has no stderr, for the next cq to print (never
    through a link: only cq's own file is written)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
    with contextlib.suppress(OSError):
        fd = os.open(database.with_name(NOTICE_NAME), flags, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(message[:_NOTICE_CHARS] + "\n")


def take_notice(database: Path) -> str | None:
    """The warning a writer left (``leave_notice``), removed: printed once, its first line."""
    path = database.with_name(NOTICE_NAME)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as notice:
            raw = notice.read(_NOTICE_CHARS * 4)
        path.unlink()
    except OSError:
        return None
    message = raw.decode("utf-8", "replace").strip().split("\n", 1)[0]
    return message or None


def wait_for_writer(database: Path) -> None:
    """Wait (up to ``_WRITER_WAIT_S``) until no child is storing the writes a cq that has
    ended handed it: what that cq found is then in the store for this one. No lock file (a
    new cache dir), none held, or a writer that slow (its entries are missed): at once."""
    try:
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(database.with_name(WRITER_LOCK_NAME), flags)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            _shared_within(fd, _WRITER_WAIT_S)
    finally:
        os.close(fd)


def hold(database: Path) -> int:
    """A descriptor holding the shared lock for the store at ``database`` (release it with
    ``let_go`` after closing the connection); ``Busy`` when a removal holds it too long."""
    fd = _open(database)
    try:
        if not _shared_within(fd, _WAIT_S):
            raise Busy(16, "another cq process is removing the cache database")
    except OSError:
        os.close(fd)
        raise
    return fd


def _shared_within(fd: int, seconds: float) -> bool:
    """Whether ``fd``'s shared flock was had within ``seconds`` (polled: a lock held
    exclusively is waited for, never queued behind)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(_PAUSE_S)


def let_go(fd: int | None) -> None:
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)


@contextlib.contextmanager
def alone(database: Path) -> Iterator[bool]:
    """Whether this process may remove or rename the store's files (True: no other process
    has them open, and none opens them until the block ends). The caller must have closed
    its own connection first: its shared lock counts as another holder."""
    try:
        fd = _open(database)
    except OSError:
        yield False
        return
    with exclusive(fd) as had:
        yield had


@contextlib.contextmanager
def exclusive(fd: int) -> Iterator[bool]:
    """Whether ``fd``'s exclusive flock was had without waiting (held until the block ends,
    then ``fd`` is closed, whichever way it went): the one-holder test of a lock file."""
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def _open(database: Path, name: str = LOCK_NAME) -> int:
    return os.open(
        database.with_name(name), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
    )
