"""How far a search has got: a progress line on stderr for searches that take more than a
second, only on a terminal, and the wall time of each stage (``timed``), which the result's
run info reports."""

from __future__ import annotations

import sys
import threading
import time

from cq.cancel import Check, never
from cq.forked import PROGRESS_THREAD  # a forked helper may run beside this thread

_DELAY = 1.0


class Progress:
    """Keeps the latest status line and shows it once the search has run for ``_DELAY`` s."""

    def __init__(self, *, enabled: bool, check: Check = never) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self.check = check  # status updates are checkpoints of a cancellable search too
        self._status = "searching"
        self._shown = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if self.enabled:
            self._thread = threading.Thread(target=self._loop, name=PROGRESS_THREAD, daemon=True)
            self._thread.start()

    def update(self, status: str) -> None:
        self.check()
        self._status = status

    def searching(self, matched_files: int, matches: int) -> None:
        """Candidate-phase callback: rg's progress so far."""
        self.check()
        self._status = f"searching: {matches} matches in {matched_files} files"

    def _loop(self) -> None:
        if self._stop.wait(_DELAY):
            return
        last = ""
        while not self._stop.is_set():
            if self._status != last:
                last = self._status
                sys.stderr.write(f"\r\x1b[Kcq: {last}")
                sys.stderr.flush()
                self._shown = True
            self._stop.wait(0.2)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1)
        if self._shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


class timed:
    """Add the wall time of a block to ``timings[name]`` in milliseconds."""

    def __init__(self, timings: dict[str, float], name: str) -> None:
        self.timings, self.name = timings, name

    def __enter__(self) -> None:
        self.t0 = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        elapsed = (time.perf_counter() - self.t0) * 1000
        self.timings[self.name] = self.timings.get(self.name, 0.0) + elapsed
