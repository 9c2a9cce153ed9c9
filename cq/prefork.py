"""A child forked before its work is known (``Standby``): it readies itself (imports) while
this process goes on, says when it is ready, then computes the one request it is sent,
which carries what a fork of that moment would have inherited; and what keeps it from
slowing this process: it starts only when a core is idle (``idle_core``), readies at a
lower priority, and is stopped while rg runs (``held_still``). Built on ``cq.forked``'s
``Forked`` (the child's set-up, its answer through a pipe, its reaping). Used by the
one-shot CLI for the enrichment's standby (``cq.enrich.standby``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator

from cq.forked import Forked


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
