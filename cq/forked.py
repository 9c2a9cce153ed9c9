"""One computation in a forked copy of this process, run while this process does its share.

A spawned worker starts a fresh interpreter and imports the parsers (``cq.classify.pool``:
~0.2-0.3 CPU-s), more than the work of a small search it could take; a fork starts with
everything this process has imported and read, so a share of a few tenths of a second is
worth handing over. ``Forked.start(work)`` runs ``work()`` in the child, which sends the
bytes it returns through a pipe; ``result()`` reads them once this process is done with its
own share (None: the child failed, and the caller does the work itself, so a failure costs
time, never an answer).

``Turns`` shares a list of items with a child the same way, without a split decided in
advance: each side takes the next item not yet taken, so neither waits for the other because
a guess of the items' costs was wrong (a slice's parse cost is known only once planned).

A child forked before its work is known is ``cq.prefork``'s.

Only a process with no other thread than the progress line's forks (``possible``): another
thread may hold a lock the child would need (an import's, a stream's). So the CLI's one-shot
search forks; a long-lived server process, with its warm-up and Pyrefly threads, does its
work itself. The child never touches the cache's sqlite connection, never writes to the
standard streams (they go to /dev/null, warnings are off) nor flushes the parent's buffered
output (it leaves with ``os._exit``), ignores ^C (the parent's ``KeyboardInterrupt`` kills
it) and is killed by the kernel when the parent dies.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
import warnings
from array import array
from collections.abc import Callable
from functools import cache

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
# The progress line's thread (``cq.progress``) only writes to stderr, which a child never does.
PROGRESS_THREAD = "cq-progress"


def possible() -> bool:
    """Whether this process may fork a helper: Linux, and no other thread running but the
    progress line's (``cq.progress``: it writes to stderr, which the child never does)."""
    if sys.platform != "linux":
        return False
    others = [t for t in threading.enumerate() if t is not threading.current_thread()]
    return all(t.name == PROGRESS_THREAD for t in others)


class Forked:
    """A forked child computing ``work()``; ``result()`` reaps it."""

    def __init__(self, pid: int, reader: int) -> None:
        self.pid, self.reader = pid, reader
        self.reaped = False  # its pid and descriptor are not ours to touch once reaped

    @classmethod
    def start(cls, work: Callable[[], bytes]) -> Forked | None:
        """Fork a child running ``work``; None when the fork fails (the caller works alone)."""
        prctl = _prctl()
        parent = os.getpid()
        reader, writer = os.pipe()
        try:
            with warnings.catch_warnings():  # Python 3.12+ warns of the progress thread
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
        except OSError:
            os.close(reader)
            os.close(writer)
            return None
        if pid == 0:  # pragma: no cover - runs in the child (tests see its result)
            _child(work, writer, reader, parent, prctl)
        os.close(writer)
        return cls(pid, reader)

    def result(self) -> bytes | None:
        """What the child sent, once it exited; None when it failed."""
        chunks: list[bytes] = []
        try:
            while chunk := os.read(self.reader, 1 << 20):
                chunks.append(chunk)
        finally:
            status = self._reap()
        return b"".join(chunks) if status == 0 else None

    def kill(self, *, wait: bool = True) -> None:
        """End the child now (a cancelled search, ^C): its work is of no more use. Without
        ``wait`` it is reaped by a later ``kill`` (the kernel frees a large child's pages
        for milliseconds, which its parent need not wait for mid-search)."""
        if not self.reaped:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
            if wait:
                self._reap()

    def _reap(self) -> int:
        """Close the pipe and wait for the child: its exit status (-1 when it could not be
        had)."""
        self.reaped = True
        os.close(self.reader)
        while True:
            try:
                _, raw = os.waitpid(self.pid, 0)
            except InterruptedError:
                continue
            except ChildProcessError:
                return -1
            return os.waitstatus_to_exitcode(raw)


class Turns:
    """Items ``0..count-1`` taken one at a time by this process (``take``) and a forked child
    (``start``'s ``work``, run for each item the child takes), whichever is free first: the
    item numbers sit in a pipe both read, two bytes a read, and the kernel serializes a
    pipe's reads, so each number is read once. The child takes the first item (this
    process's first ``take`` waits until it has: a child scheduled late would otherwise
    find nothing left, on a loaded machine), so both sides take part when there are two
    items or more. Give the items largest first: the last ones, which one side may finish
    while the other waits, are then the cheapest."""

    # Numbers written before the fork into a pipe nobody reads yet: 4 KiB fits even a
    # pipe the kernel shrank to one page (``pipe-user-pages-soft``).
    MAX_ITEMS = 2048

    def __init__(self, helper: Forked, reader: int, started: int) -> None:
        self.helper, self.reader = helper, reader
        self.started: int | None = started  # closed by the child once it took its item
        self.open = True

    @classmethod
    def start(cls, count: int, work: Callable[[int], bytes]) -> Turns | None:
        """The child started on the items it takes; None when the items do not fit or the
        fork fails (the caller does them all)."""
        if not 0 < count <= cls.MAX_ITEMS:
            return None
        reader, writer = os.pipe()
        numbers = array("H", range(count)).tobytes()
        try:
            os.set_blocking(writer, False)
            written = os.write(writer, numbers)
        except OSError:
            written = -1
        os.close(writer)  # the numbers stay: both sides read them, then see the end
        if written != len(numbers):
            os.close(reader)
            return None

        started, taken = os.pipe()

        def child() -> bytes:
            done: list[tuple[int, bytes]] = []
            first = _take(reader)
            os.close(taken)  # this process's end: the parent may take its turns
            item = first
            while item is not None:
                done.append((item, work(item)))
                item = _take(reader)
            import msgspec

            return msgspec.msgpack.encode(done)

        helper = Forked.start(child)
        os.close(taken)  # the child's copy alone holds it open now
        if helper is None:
            os.close(reader)
            os.close(started)
            return None
        return cls(helper, reader, started)

    def take(self) -> int | None:
        """The next item for this process; None once every item is taken."""
        if self.started is not None:  # the first turn: once the child has taken its item
            os.read(self.started, 1)  # the end of the pipe: the child closed it, or died
            os.close(self.started)
            self.started = None
        return _take(self.reader) if self.open else None

    def finish(self) -> dict[int, bytes] | None:
        """The child's results by item, once it is done; None when it failed (the items it
        took are then this process's to do)."""
        self._close()
        blob = self.helper.result()
        if blob is None:
            return None
        import msgspec  # not at the top: the CLI forks its standby before importing it

        try:
            return dict(msgspec.msgpack.decode(blob, type=list[tuple[int, bytes]]))
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None

    def abandon(self) -> None:
        """End the child now (a cancelled search, an error here)."""
        self._close()
        self.helper.kill()

    def _close(self) -> None:
        if self.open:
            self.open = False
            os.close(self.reader)
        if self.started is not None:
            os.close(self.started)
            self.started = None


def _take(reader: int) -> int | None:
    """The next number from a ``Turns`` pipe (None at its end)."""
    pair = os.read(reader, 2)
    return int.from_bytes(pair, sys.byteorder) if len(pair) == 2 else None


def _child(
    work: Callable[[], bytes],
    writer: int,
    reader: int,
    parent: int,
    prctl: Callable[[int, int], int] | None,
) -> None:  # pragma: no cover - runs in the child
    status = 1
    try:
        os.close(reader)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not a handler of the parent's
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the parent died before the line above took effect
            os._exit(1)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        warnings.simplefilter("ignore")  # the parent's stderr lock may be held by its thread
        gc.disable()  # a short life: a collection would only copy the parent's pages
        payload = memoryview(work())
        while payload:
            payload = payload[os.write(writer, payload) :]
        status = 0
    except BaseException:
        status = 1
    finally:
        os._exit(status)


@cache
def _prctl() -> Callable[[int, int], int] | None:
    """libc's ``prctl``, looked up in the parent (nothing is loaded in the child)."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl  # type: ignore[no-any-return]
    except (OSError, AttributeError):
        return None
