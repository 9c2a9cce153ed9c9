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

``Standby`` is forked before its work is known: it readies itself (imports) while this
process goes on, then computes the one request it is sent, which carries what a fork of that
moment would have inherited.

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
from collections.abc import Callable, Iterator
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


def idle_core() -> bool:
    """Whether a core this process may run on is idle now: fewer tasks runnable than the
    cores it may use (``/proc/loadavg``'s fourth field, this process counted; an instant's
    reading, which a machine kept busy by other work fails)."""
    try:
        with open("/proc/loadavg", "rb") as fh:
            runnable = int(fh.read().split()[3].split(b"/")[0])
        return runnable < len(os.sched_getaffinity(0))
    except (OSError, ValueError, IndexError):
        return False


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


@contextlib.contextmanager
def held_still() -> Iterator[None]:
    """The standbys still readying stopped while the block runs (rg: it keeps every core
    busy, and a standby's imports beside it slowed a first question's vocabulary, rg over the
    stdlib's definitions, from 0.36 to 0.53 s even ten nice levels lower: the cores of a
    2-vCPU machine are hyperthreads of one). A ready standby waits on a pipe: left alone."""
    stopped = [s for s in _readying if not s.wait_ready(0)]
    for standby in stopped:
        with contextlib.suppress(OSError):
            os.kill(standby.helper.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for standby in stopped:
            with contextlib.suppress(OSError):
                os.kill(standby.helper.pid, signal.SIGCONT)


class Standby:
    """A child forked before its work is known: it readies itself (``ready``: the imports a
    computation will need) while this process goes on, says so (``wait_ready``), then
    computes ``work(request)`` for the one request ``ask`` sends it, or is dismissed
    unasked. What a fork of the asking moment would inherit (this process's later state)
    travels in the request.

    ``ready`` runs in a thread of the child whose nice value is ``nice`` above its own (a
    Linux thread has its own): beside this process's work it takes a core's idle time
    rather than half of a busy one. Only that thread is lowered, and it has ended before
    ``work`` runs, so the work runs at this process's priority (a nice value, once raised,
    cannot be lowered again without privilege)."""

    def __init__(self, helper: Forked, requests: int, readiness: int) -> None:
        self.helper, self.requests, self.readiness = helper, requests, readiness
        self.asked = False
        self.ready = False

    # How much lower ``ready`` runs: a tenth of a core this process keeps busy (CFS weights
    # 110 against 1024), all of an idle one. Measured with bench.first_search on the stdlib
    # with one core kept busy (bench/results/2026-11-30-speed13): 'register' took 0.65 s
    # beside an enrichment standby importing at this process's priority, 0.49 s without one.
    NICE = 10
    # The window over which a child still readying must have run half the time to be waited
    # for: five scheduler ticks at 100 Hz, long enough to tell a child that has a core from
    # one that shares it with other work.
    STARVED_S = 0.05

    @classmethod
    def start(
        cls, ready: Callable[[], object], work: Callable[[bytes], bytes], *, nice: int = NICE
    ) -> Standby | None:
        """The child started on ``ready``; None when the fork fails."""
        reader, writer = os.pipe()
        told, tell = os.pipe()

        def child() -> bytes:
            os.close(writer)  # the request ends when the parent closes its end
            os.close(told)
            _ready_lowered(ready, nice)
            os.write(tell, b"r")
            os.close(tell)
            chunks: list[bytes] = []
            while chunk := os.read(reader, 1 << 20):
                chunks.append(chunk)
            if not chunks:  # dismissed: nothing was asked
                raise SystemExit(1)
            return work(b"".join(chunks))

        helper = Forked.start(child)
        os.close(reader)
        os.close(tell)
        if helper is None:
            os.close(writer)
            os.close(told)
            return None
        standby = cls(helper, writer, told)
        _readying.append(standby)
        return standby

    def wait_ready(self, seconds: float, *, starved: bool = True) -> bool:
        """Whether the child is ready, waiting for it up to ``seconds`` while it gets a core:
        lowered, it runs at full speed once this process waits, unless every core is busy
        with other work, when it gets a tenth of one. Then it is given up (with ``starved``)
        as soon as a ``STARVED_S`` window passes in which it ran less than half the time
        (False: not ready, starved, or failed)."""
        if self.ready or self.asked:
            return self.ready
        import select
        import time

        now = time.monotonic()
        deadline, mark, ran = now + seconds, now, _cpu_ns(self.helper.pid)
        while not select.select([self.readiness], [], [], min(0.01, seconds))[0]:
            now = time.monotonic()
            if now >= deadline:
                return False
            if starved and now - mark >= self.STARVED_S:
                since, ran = ran, _cpu_ns(self.helper.pid)
                if since is None or ran is None or ran - since < (now - mark) * 0.5e9:
                    return False
                mark = now
        self.ready = os.read(self.readiness, 1) == b"r"  # b"": it failed
        self._settled()
        return self.ready

    def ask(self, request: bytes) -> Forked | None:
        """Send ``request``; the child's answer is its ``Forked.result()``. None when the
        child is gone (the caller computes the request's work itself). Blocks until the
        child, done with ``ready``, has read all but a pipe's worth of the request."""
        self.asked = True
        os.close(self.readiness)
        self._settled()
        try:
            view = memoryview(request)
            while view:
                view = view[os.write(self.requests, view) :]
        except OSError:  # the child died (EPIPE): reap it
            self.helper.kill()
            return None
        finally:
            os.close(self.requests)
        return self.helper

    def dismiss(self, *, wait: bool = True) -> None:
        """End the child now: it was not asked, or its answer is of no more use; without
        ``wait``, reaped by a later ``dismiss``."""
        if not self.asked:
            self.asked = True
            os.close(self.requests)
            os.close(self.readiness)
        self._settled()
        self.helper.kill(wait=wait)

    def _settled(self) -> None:
        """Ready, asked or dismissed: no more for ``held_still`` to stop."""
        if self in _readying:
            _readying.remove(self)


_readying: list[Standby] = []  # started, not yet ready, asked nor dismissed (``held_still``)


def _cpu_ns(pid: int) -> int | None:
    """Nanoseconds the process's threads have run (``/proc/PID/task/*/schedstat``); None
    without ``/proc``."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            path = f"/proc/{pid}/task/{task}/schedstat"
            with contextlib.suppress(OSError), open(path, "rb") as fh:  # OSError: it ended
                total += int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return total


def _ready_lowered(ready: Callable[[], object], nice: int) -> None:  # pragma: no cover
    """In a ``Standby`` child: ``ready()`` in a thread ``nice`` lower; its error raised here."""
    failed: list[BaseException] = []

    def lowered() -> None:
        try:
            if nice:
                tid = threading.get_native_id()
                with contextlib.suppress(OSError):
                    own = os.getpriority(os.PRIO_PROCESS, tid)
                    os.setpriority(os.PRIO_PROCESS, tid, min(19, own + nice))
            ready()
        except BaseException as exc:  # the child's main thread ends on it
            failed.append(exc)

    thread = threading.Thread(target=lowered, name="cq-standby-ready")
    thread.start()
    thread.join()
    if failed:
        raise failed[0]


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
