"""The syntax fallback of one search, run beside Pyrefly: ``SyntaxPass`` resolves the callsites
being asked in a thread of its own while Pyrefly answers, so its parses (a fixture lookup
reads the conftest files and plugin modules: bench/results/2026-11-29-figures-from-cq.md)
overlap the wait instead of following it. Only its answers for the callsites Pyrefly
left without a definition are used (``SemanticRun._fallback``); one not ready by the
deadline is cut like a late Pyrefly answer. For a method call whose receiver it cannot
follow it also finds the root's one method of that name (``unique_name.py``), which the stage
takes only when Pyrefly typed the call ``Unknown``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import msgspec

from cq.model import Finding, SemanticDefinition
from cq.parse import SourceFile
from cq.semantic.syntax_resolve import SyntaxResolver
from cq.semantic.unique_name import UniqueNames


class SyntaxAnswer(msgspec.Struct, frozen=True):
    """The syntax reading of one callsite: its certain ``definition``, else, for ``x.m()``
    with an opaque ``x``, the root's one method ``m`` (``unique``, not yet checked against
    the modules outside the root: ``UniqueNames.defined_outside``)."""

    definition: SemanticDefinition | None = None
    unique: SemanticDefinition | None = None
    name: str | None = None


class SyntaxPass:
    """Resolves ``hits`` (callsites) in the background, in order."""

    def __init__(
        self,
        root: str,
        source: Callable[[str], SourceFile | None],
        hits: list[Finding],
        unique: UniqueNames,
    ) -> None:
        self._hits = hits
        self._unique = unique
        self._results: dict[int, SyntaxAnswer] = {}
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._resolver = SyntaxResolver(root, source)
        self._thread = threading.Thread(target=self._run, name="cq-syntax-resolve", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        """Each hit in order; a hit that needs the unique-name reading waits for the end of
        the pass, its rg runs started at once (they overlap the other hits' reading)."""
        try:
            waiting: list[tuple[int, str]] = []
            for index, hit in enumerate(self._hits):
                found, name = self._resolver.read(hit)
                if found is None and name is not None:
                    self._unique.prefetch({name})
                    waiting.append((index, name))
                    continue
                with self._lock:
                    self._results[index] = SyntaxAnswer(definition=found)
            for index, name in waiting:
                unique = self._unique.candidate(name, self._resolver.parsed)
                with self._lock:
                    self._results[index] = SyntaxAnswer(unique=unique, name=name)
        finally:
            self._done.set()

    def result(self, index: int, deadline: float) -> tuple[bool, SyntaxAnswer]:
        """(ready, definition) of ``hits[index]``, waiting for it until ``deadline``."""
        while True:
            with self._lock:
                if index in self._results:
                    return True, self._results[index]
            if self._done.is_set():
                return False, SyntaxAnswer()  # the pass ended early (an error): no answer
            left = deadline - time.monotonic()
            if left <= 0:
                return False, SyntaxAnswer()
            self._done.wait(min(left, 0.01))
