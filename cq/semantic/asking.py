"""One batch of questions to Pyrefly: the shown hits a search did not find in the cache.

``Batch.run(deadline)`` gets the root's server, asks it about every hit (``questions.py``),
runs cq's syntax reading of the callsites beside it (``fallback.py``), combines the two, and
stores every answer the clock did not cut (``memo.py``), in two steps: ``first`` (types and
definitions, as soon as Pyrefly has checked the hits' files) and ``finish`` (reference counts
and errors, after Pyrefly's index of the root). A long-lived cq runs a batch in the background
(``later.py``, deadline: ``budget_ms``), its two steps apart so that a later search's first
step need not wait for an earlier one's index; a search told to wait runs it in the
foreground (deadline: ``wait_ms``); either way the answers are cached, and the facts are
returned for the one that waits.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import msgspec

from cq.model import Finding, SemanticFacts
from cq.parse import SourceFile
from cq.semantic.fallback import SyntaxAnswer, SyntaxPass
from cq.semantic.memo import AnswerMemo, KnownAnswer
from cq.semantic.questions import Ask, Questions
from cq.semantic.rpc import BUDGET_PHRASES, NOT_WITHIN_BUDGET
from cq.semantic.server import PyreflyServer
from cq.semantic.unique_name import UniqueNames

_SYNTAX_CUT = "syntax resolution: time budget"
# A first answer's reason: its reference count and errors wait for Pyrefly's index of the
# root; the answer is complete (``KnownAnswer.complete``) from a later search on.
_STILL_COMING = "still being asked"


class Batch:
    """The missing answers of one search: ``hits`` with their cache ``keys`` (None: not
    cacheable). Asked in two steps, each stored when done: ``first`` (types, definitions and
    cq's syntax reading: what a search orders by and a callsite resolves to, answered as soon
    as Pyrefly has checked the hits' files) and ``finish`` (reference counts and errors on
    the line, which wait for Pyrefly's index of the root: 30 s on moto against 3 s for the
    first step; ``bench/results/2026-11-30-speed8``)."""

    def __init__(
        self,
        root: str,
        hits: list[Finding],
        keys: list[str | None],
        *,
        memo: AnswerMemo,
        source: Callable[[str], SourceFile | None],
        server: Callable[[], PyreflyServer | None],
        unique: UniqueNames,
    ) -> None:
        self.root = root
        self.hits = hits
        self.keys = keys
        self.memo = memo
        self._source = source
        self._server = server
        self._unique = unique
        self._syntax: SyntaxPass | None = None
        self._failure: str | None = None
        self._asked: tuple[PyreflyServer, list[Ask], Questions, dict[str, int]] | None = None

    def run(self, deadline: float) -> list[SemanticFacts]:
        """Facts per hit, everything done by ``deadline`` (``time.monotonic``); those the
        clock did not cut are stored."""
        self.first(deadline)
        return self.finish(deadline)

    def first(self, deadline: float) -> None:
        """Hover and definition of every hit, cq's syntax reading of the callsites beside
        them; each answer the clock did not cut is stored as a first answer
        (``KnownAnswer.complete`` False: its reference count and errors still to come)."""
        calls = [hit for hit in self.hits if hit.category == "callsite"]
        if calls:
            self._syntax = SyntaxPass(self.root, self._source, calls, self._unique)
        server = self._server()
        self._failure = self._unavailable(server, deadline)
        if self._failure is not None or server is None:
            return
        asks = [Ask(f, self._source(f.file)) for f in self.hits]
        questions = Questions(self.root, server, self._source)
        versions = questions.sync(asks)
        questions.positions(asks, deadline)
        self._asked = (server, asks, questions, versions)
        coming = [_still_coming(a.finding, server.indexing) for a in asks]
        facts = [a.facts(still) for a, still in zip(asks, coming, strict=True)]
        self._store(self._resolved(facts, deadline), asks, complete=False)

    def finish(self, deadline: float) -> list[SemanticFacts]:
        """Reference counts (once Pyrefly has indexed the root) and the errors on each hit's
        line; the complete answers stored, replacing the first ones."""
        if self._asked is None:
            failed = SemanticFacts(status="failed", reason=self._failure)
            return self._resolved([failed] * len(self.hits), deadline)
        server, asks, questions, versions = self._asked
        if server.indexing:  # without the workspace index references stay within open files
            questions.references(asks, deadline)
        questions.diagnostics(asks, versions, deadline)
        server.trim(keep={str(Path(self.root) / f.file) for f in self.hits})
        facts = self._resolved([a.facts() for a in asks], deadline)
        self._store(facts, asks, complete=True)
        return facts

    def _resolved(self, facts: list[SemanticFacts], deadline: float) -> list[SemanticFacts]:
        """``facts`` with cq's syntax reading (waited for until ``deadline``) for the
        callsites Pyrefly left unresolved."""
        if self._syntax is None:
            return facts
        out = list(facts)
        outside = self._outside_by(deadline)
        calls = [i for i, hit in enumerate(self.hits) if hit.category == "callsite"]
        for n, i in enumerate(calls):
            out[i] = _fallback(out[i], self._syntax.result(n, deadline), outside)
        return out

    def _store(self, facts: list[SemanticFacts], asks: list[Ask], *, complete: bool) -> None:
        fresh = {}
        for i, (key, fact) in enumerate(zip(self.keys, facts, strict=True)):
            if key is not None and storable(fact):
                depends = self._depends(self.hits[i], fact, asks[i].referenced)
                fresh[key] = KnownAnswer(fact, depends, complete=complete)
        self.memo.put(fresh)

    def _depends(
        self, hit: Finding, fact: SemanticFacts, referenced: tuple[str, ...]
    ) -> tuple[tuple[str, str], ...]:
        """The root's files the answer names, with their digests in this search."""
        named = set(referenced)
        if fact.definition is not None and fact.definition.file is not None:
            named.add(fact.definition.file)
        named.discard(hit.file)
        out = []
        for rel in sorted(named):
            source = self._source(rel)
            out.append((rel, source.digest if source is not None else ""))
        return tuple(out)

    def _ask(self, server: PyreflyServer, deadline: float) -> list[Ask]:
        asks = [Ask(f, self._source(f.file)) for f in self.hits]
        questions = Questions(self.root, server, self._source)
        versions = questions.sync(asks)
        questions.positions(asks, deadline)
        if server.indexing:  # without the workspace index references stay within open files
            questions.references(asks, deadline)
        questions.diagnostics(asks, versions, deadline)
        server.trim(keep={str(Path(self.root) / f.file) for f in self.hits})
        return asks

    def _unavailable(self, server: PyreflyServer | None, deadline: float) -> str | None:
        if server is None:
            return "pyrefly not installed"
        if not server.initialized.wait(max(deadline - time.monotonic(), 0.0)):
            return f"server not ready {NOT_WITHIN_BUDGET}"
        if server.error:
            return server.error
        if not server.alive():
            return "server exited" + (f": {server.stderr_tail()}" if server.stderr_tail() else "")
        return None

    def _outside_by(self, deadline: float) -> Callable[[str], bool | None]:
        return lambda name: self._unique.defined_outside(name, deadline)


def _still_coming(hit: Finding, indexing: bool) -> str:
    """What a first answer lacks, as its reason says."""
    kinds = "reference count and errors" if indexing and hit.category == "definition" else "errors"
    return f"{kinds}: {_STILL_COMING}"


def cut_by_clock(facts: SemanticFacts) -> bool:
    """Not applied because a deadline passed (Pyrefly's answers or cq's syntax reading)."""
    reason = facts.reason or ""
    return facts.status != "applied" and (
        any(p in reason for p in BUDGET_PHRASES) or _SYNTAX_CUT in reason
    )


def storable(facts: SemanticFacts) -> bool:
    """Kept in the cache: every answer came, or Pyrefly itself answered with an error (asking
    again gets the same); never a server that failed or a clock that cut."""
    return facts.status == "applied" or (facts.status == "degraded" and not cut_by_clock(facts))


def _fallback(
    fact: SemanticFacts,
    syntax: tuple[bool, SyntaxAnswer],
    defined_outside: Callable[[str], bool | None],
) -> SemanticFacts:
    """A callsite Pyrefly left without a definition takes cq's own reading of the source,
    when it is certain (``syntax_resolve.py``, marked ``via: syntax``); else, for ``x.m()``
    that Pyrefly typed ``Unknown`` and the syntax reading could not follow, the root's one
    method ``m`` when nothing outside the root defines it either (``unique_name.py``, ``via:
    unique-name``). One the syntax pass had no time for is ``degraded`` (asked again next
    time, never cached as answered). A hit Pyrefly failed on (missing, dead, silent) gets
    nothing: a failed stage changes no other output (Top Contexts groups resolved callsites)."""
    if fact.definition is not None or fact.status == "failed":
        return fact
    ready, answer = syntax
    if not ready:
        return _syntax_cut(fact)
    if answer.definition is not None:
        return msgspec.structs.replace(fact, definition=answer.definition)
    untyped = fact.type is not None and "Unknown" in fact.type
    if answer.unique is None or answer.name is None or not untyped:
        return fact
    outside = defined_outside(answer.name)
    if outside is None:
        return _syntax_cut(fact)
    return fact if outside else msgspec.structs.replace(fact, definition=answer.unique)


def _syntax_cut(fact: SemanticFacts) -> SemanticFacts:
    """A hit whose syntax reading had no time: ``degraded``, asked again next time."""
    reason = "; ".join(r for r in (fact.reason, _SYNTAX_CUT) if r)
    status = "degraded" if fact.status == "applied" else fact.status
    return msgspec.structs.replace(fact, status=status, reason=reason)
