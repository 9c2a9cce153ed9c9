"""Asking Pyrefly in the background, in a process that outlives its searches.

A long-lived cq (``cq mcp``'s search workers, cq's server: both call ``keep_warm``) hands the
answers a search did not find in the cache to ``Later``: batches in the order they came,
each within its ``budget_ms``, on two threads. The first step of each batch (types and
definitions, ``asking.Batch.first``: stored as soon as they come) runs on one; the second
(reference counts and errors, which wait for Pyrefly's index of the root: ``finish``) on the
other, so a later search's first step is not queued behind an earlier one waiting for an
index (moto: 30 s of indexing against 3 s for a first step). A search never waits for either;
the answers they store are shown from the next search on. While a search runs in the process
(``hold`` .. ``release``, from ``cq.server.warm``) no step starts: its Python work would take
the interpreter lock from the search, and its Pyrefly the cores, for answers that search does
not show. A hit already in a queued or running batch is not asked twice, so a search repeated
while Pyrefly works adds nothing. The threads are daemons: they never keep the process alive,
and the pool's servers stop at exit.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # batches come made: a one-shot search never imports what asks Pyrefly
    from cq.semantic.asking import Batch


class Later:
    """The process's background batches: first steps one at a time on one thread, second
    steps one at a time on another."""

    def __init__(self) -> None:
        self._first: deque[tuple[Batch, float]] = deque()  # (batch, budget in seconds)
        self._finish: deque[tuple[Batch, float]] = deque()  # (batch, its deadline)
        self._asking: set[str] = set()  # cache keys of the queued and running batches' hits
        self._changed = threading.Condition()
        self._busy = 0  # steps running
        self._held = False  # a search is running: steps wait for ``release``
        self._threads: list[threading.Thread] = []

    def submit(self, batch: Batch, budget_s: float) -> None:
        """Queue ``batch`` (less the hits already being asked), to run within ``budget_s``."""
        with self._changed:
            wanted = [
                i for i, key in enumerate(batch.keys) if key is None or key not in self._asking
            ]
            if not wanted:
                return
            batch.hits = [batch.hits[i] for i in wanted]
            batch.keys = [batch.keys[i] for i in wanted]
            self._asking.update(k for k in batch.keys if k is not None)
            self._first.append((batch, budget_s))
            if not self._threads:
                for name, step in (("first", self._first), ("finish", self._finish)):
                    thread = threading.Thread(
                        target=self._loop, args=(step,), name=f"cq-lsp-{name}", daemon=True
                    )
                    self._threads.append(thread)
                    thread.start()
            self._changed.notify_all()

    def hold(self) -> None:
        """A search starts: no step starts until ``release`` (one already running goes on)."""
        with self._changed:
            self._held = True

    def release(self) -> None:
        """The search is done: queued steps run."""
        with self._changed:
            self._held = False
            self._changed.notify_all()

    def idle(self, timeout: float) -> bool:
        """Wait until nothing is queued or running (benches and tests: the answers are in the
        cache then); False when ``timeout`` seconds passed first."""
        end = time.monotonic() + timeout
        with self._changed:
            while self._first or self._finish or self._busy:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
            return True

    def _loop(self, queue: deque[tuple[Batch, float]]) -> None:
        first = queue is self._first
        while True:
            with self._changed:
                while not queue or self._held:
                    self._changed.wait()
                batch, when = queue.popleft()
                self._busy += 1
            # the budget runs from the batch's start (``when``: its budget), not its queueing
            deadline = time.monotonic() + when if first else when
            more = False
            try:
                with contextlib.suppress(Exception):  # a batch that fails is asked again later
                    if first:
                        batch.first(deadline)
                        more = True
                    else:
                        batch.finish(deadline)
            finally:
                with self._changed:
                    if more:
                        self._finish.append((batch, deadline))
                    else:
                        self._asking.difference_update(k for k in batch.keys if k is not None)
                    self._busy -= 1
                    self._changed.notify_all()


_LOCK = threading.Lock()
_LATER: list[Later] = []


def later() -> Later:
    """The process's background asker, created on first use."""
    with _LOCK:
        if not _LATER:
            _LATER.append(Later())
        return _LATER[0]
