"""The syntax fallback of one search, run beside Pyrefly: ``SyntaxPass`` resolves the callsites
being asked in a thread of its own while Pyrefly answers, so its parses (a fixture lookup
reads the conftest files and plugin modules: 84 files, 0.75 s cold, for one saleor query at
load 15) overlap the wait instead of following it. Only its answers for the callsites Pyrefly
left without a definition are used (``SemanticRun._fallback``); one not ready by the
deadline is cut like a late Pyrefly answer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from cq.model import Finding, SemanticDefinition
from cq.parse import SourceFile
from cq.semantic.syntax_resolve import SyntaxResolver


class SyntaxPass:
    """Resolves ``hits`` (callsites) in the background, in order."""

    def __init__(
        self, root: str, source: Callable[[str], SourceFile | None], hits: list[Finding]
    ) -> None:
        self._hits = hits
        self._results: dict[int, SemanticDefinition | None] = {}
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._resolver = SyntaxResolver(root, source)
        self._thread = threading.Thread(target=self._run, name="cq-syntax-resolve", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for index, hit in enumerate(self._hits):
                found = self._resolver.resolve(hit)
                with self._lock:
                    self._results[index] = found
        finally:
            self._done.set()

    def result(self, index: int, deadline: float) -> tuple[bool, SemanticDefinition | None]:
        """(ready, definition) of ``hits[index]``, waiting for it until ``deadline``."""
        while True:
            with self._lock:
                if index in self._results:
                    return True, self._results[index]
            if self._done.is_set():
                return False, None  # the pass ended early (an error): no answer
            left = deadline - time.monotonic()
            if left <= 0:
                return False, None
            self._done.wait(min(left, 0.01))
