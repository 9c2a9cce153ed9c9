"""Asking Pyrefly in the background, in a process that outlives its searches.

A long-lived cq (``cq mcp``'s search workers, cq's server: both call ``keep_warm``) hands the
answers a search did not find in the cache to ``Later``: one thread, batches in the order
they came, each within its ``budget_ms``. A search never waits for it; the answers it stores
are shown from the next search on. While a search runs in the process (``hold`` ..
``release``, from ``cq.server.warm``) no batch starts: its Python work would take the
interpreter lock from the search, and its Pyrefly the cores, for answers that search does not
show. A hit already in a queued or running batch is not asked twice, so a search repeated
while Pyrefly works adds nothing. The thread is a daemon: it never keeps the process alive,
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
    """The process's background batches, run one at a time on one thread."""

    def __init__(self) -> None:
        self._queue: deque[tuple[Batch, float]] = deque()
        self._asking: set[str] = set()  # cache keys of the queued and running batches' hits
        self._changed = threading.Condition()
        self._busy = False
        self._held = False  # a search is running: batches wait for ``release``
        self._thread: threading.Thread | None = None

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
            self._queue.append((batch, budget_s))
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="cq-lsp-later", daemon=True)
                self._thread.start()
            self._changed.notify_all()

    def hold(self) -> None:
        """A search starts: no batch starts until ``release`` (one already running goes on)."""
        with self._changed:
            self._held = True

    def release(self) -> None:
        """The search is done: queued batches run."""
        with self._changed:
            self._held = False
            self._changed.notify_all()

    def idle(self, timeout: float) -> bool:
        """Wait until nothing is queued or running (benches and tests: the answers are in the
        cache then); False when ``timeout`` seconds passed first."""
        end = time.monotonic() + timeout
        with self._changed:
            while self._queue or self._busy:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
            return True

    def _loop(self) -> None:
        while True:
            with self._changed:
                while not self._queue or self._held:
                    self._changed.wait()
                batch, budget_s = self._queue.popleft()
                self._busy = True
            try:
                with contextlib.suppress(Exception):  # a batch that fails is asked again later
                    batch.run(time.monotonic() + budget_s)
            finally:
                with self._changed:
                    self._asking.difference_update(k for k in batch.keys if k is not None)
                    self._busy = False
                    self._changed.notify_all()


_LOCK = threading.Lock()
_LATER: list[Later] = []


def later() -> Later:
    """The process's background asker, created on first use."""
    with _LOCK:
        if not _LATER:
            _LATER.append(Later())
        return _LATER[0]
