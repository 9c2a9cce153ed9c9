"""The semantic stage of one search: ask Pyrefly about each shown Python hit, within a budget.

``SemanticRun.begin`` (right after rg, before classification) starts a background thread that
fingerprints the tree for the answer cache (``memo.py``), then, unless every answer is known
(or, in a one-shot search, the tree's fresh server was not ready in time before), gets the
root's server from the pool, starting it when there is none: Pyrefly starts (process, its view
of the root, ``initialize``) while cq classifies. Idle until a file is opened, it took 0.01
CPU-s in its first 2 s (stdlib and saleor roots). (Starting it only in ``apply``, inside the
budget, was tried: classification ran 120-520 ms slower beside it at load ~20 while 40 files
were pre-opened; with none opened, Pyrefly's work before ``apply`` is negligible.)
No file is opened before ``apply``: Pyrefly checks every opened file (and what it imports)
before it answers anything, and opening the 40 files with the most hits beforehand made the
stdlib's ``register`` wait 12.1-13.5 s for the 30 shown hits' answers instead of 3.2-4.0 s
(fresh server, budget lifted, load ~15; 8 files: 3.7-4.7 s).
``apply`` (after enrichment) takes the answers it can from the cache and asks Pyrefly the rest
(``questions.py``; references only of a server that indexes, ``settings.py``); nothing waits
past ``budget_ms`` from the start of ``apply``. Complete answers go to the cache, so a repeated
search is identical and fast.

Status per hit: ``applied`` when every answer came; ``degraded`` when some did not (the
reason says which: a request error, the time budget, references asked before indexing
ended — these are the only timing-dependent results, they say so, and they are asked again
next time); ``failed`` when the server is missing, dead or silent; ``skipped`` for hits that
are not code (comments, strings), and for every hit not in the cache when a fresh server was
not ready within the budget in an earlier search of this very tree (``memo.not_ready``): a
one-shot search does not start Pyrefly then, and the telemetry (``semantic.skipped``) says
why. A process that keeps its servers (``cq mcp``), or already runs one for the root, always
asks. Other stages' output never changes.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import msgspec

from cq.enrich import EnrichOutcome
from cq.model import (
    Finding,
    Pattern,
    RawMatch,
    RunCounters,
    SearchRequest,
    SemanticFacts,
    StageStatus,
)
from cq.parse import Corpus, SourceFile
from cq.semantic.fallback import SyntaxAnswer, SyntaxPass
from cq.semantic.memo import AnswerMemo
from cq.semantic.pool import pool
from cq.semantic.questions import Ask, Questions
from cq.semantic.ranking import refine_order
from cq.semantic.rpc import BUDGET_PHRASES, NOT_WITHIN_BUDGET
from cq.semantic.server import PyreflyServer, pyrefly_binary
from cq.semantic.settings import SemanticSettings
from cq.semantic.unique_name import UniqueNames

CODE_CATEGORIES = frozenset(
    {"definition", "callsite", "import", "from_import", "reference", "assignment", "annotation"}
)


class SemanticRun:
    """One search's use of the stage; ``active`` is False when it is off or has nothing to do."""

    def __init__(
        self, settings: SemanticSettings, request: SearchRequest, active: bool, corpus: Corpus
    ) -> None:
        self.settings = settings
        self.request = request
        self.root = request.root
        self.corpus = corpus  # the search's files, read once for every stage
        self.active = active
        self.server: PyreflyServer | None = None
        self.telemetry: dict[str, dict[str, int]] = {}  # for ``Summary.telemetry``
        self.counters = RunCounters()
        # A long-lived process, or a server already running for the root: always ask, and
        # never remember a cut as "not ready" (a warm server answers the next search).
        self.warm = active and pool().serving(self.root)
        # The index only where the process keeps its server (cq mcp), so that the same search
        # in the same kind of process always gets the same kind of answer.
        self.indexing = settings.index == "always" or (settings.index == "auto" and pool().warm)
        self.memo = AnswerMemo(
            request,
            pyrefly_binary() if active else None,
            enabled=settings.cache,
            budget_ms=settings.budget_ms,
            indexing=self.indexing,
            listing=corpus.listing,
        )
        self._files: dict[str, SourceFile | None] = {}
        self._files_lock = threading.Lock()
        self._server_lock = threading.Lock()
        self._server_asked = False
        self._unique = UniqueNames(request)

    @classmethod
    def begin(
        cls,
        request: SearchRequest,
        matches: tuple[RawMatch, ...],
        corpus: Corpus,
        settings: SemanticSettings,
    ) -> SemanticRun:
        """Fingerprint the tree and start (or reuse) the server in the background when the
        search has Python hits; files come from the search's ``corpus``."""
        python = any(m.language == "python" for m in matches)
        run = cls(settings, request, active=settings.enabled and python, corpus=corpus)
        if run.active:
            threading.Thread(target=run._prepare, name="cq-lsp-start", daemon=True).start()
        return run

    def apply(self, enriched: EnrichOutcome, limit: int) -> EnrichOutcome:
        """The findings with ``enrichment.semantic`` set on the shown Python ones, and the
        stage's status counts in the telemetry; unchanged when the stage is not active."""
        if not self.active:
            return enriched
        findings = enriched.findings
        deadline = time.monotonic() + self.settings.budget_ms / 1000
        shown = len(findings) if limit <= 0 else min(limit, len(findings))
        targets = [i for i in range(shown) if findings[i].language == "python"]
        facts = self._facts([findings[i] for i in targets], deadline)
        out = list(findings)
        for index, fact in zip(targets, facts, strict=True):
            out[index] = _with_semantic(findings[index], fact)
        counts = Counter(f.status for f in facts)
        self.telemetry["semantic"] = dict(sorted(counts.items()))
        return msgspec.structs.replace(enriched, findings=out)

    def rerank(self, ranked: list[Finding], patterns: tuple[Pattern, ...]) -> list[Finding]:
        """Within the shown prefix, hits resolved to the queried definition first
        (``ranking.refine_order``); unchanged when the stage is not active."""
        if not self.active:
            return ranked
        limit = self.request.limit
        cut = len(ranked) if limit <= 0 else min(limit, len(ranked))
        shown, counts = refine_order(ranked[:cut], patterns, self.request.query)
        if counts:
            self.telemetry["semantic.target"] = counts
        return shown + ranked[cut:]

    # -- the work --------------------------------------------------------------------------

    def _facts(self, hits: list[Finding], deadline: float) -> list[SemanticFacts]:
        """Facts per hit: from the cache when known, else asked; complete ones are kept."""
        skipped = SemanticFacts(status="skipped", reason="not code")
        code = [i for i, f in enumerate(hits) if f.category in CODE_CATEGORIES]
        self.memo.wait(deadline - time.monotonic())
        keys: dict[int, str] = {}
        for i in code:
            source = self._source(hits[i].file)
            key = self.memo.key(hits[i], source.digest) if source is not None else None
            if key is not None:
                keys[i] = key
        known = self.memo.get_many(list(keys.values()))
        facts: list[SemanticFacts] = [skipped] * len(hits)
        for i, key in keys.items():
            if key in known:
                facts[i] = known[key]
        missing = [i for i in code if keys.get(i) not in known]
        skip = None if self.warm or self.memo.not_ready is None else self._not_ready_reason()
        asked: list[SemanticFacts] = []
        calls = [i for i in missing if hits[i].category == "callsite"] if skip is None else []
        syntax = (
            SyntaxPass(self.root, self._source, [hits[i] for i in calls], self._unique)
            if calls
            else None
        )
        if skip is None:
            asked = answers = self._ask([hits[i] for i in missing], deadline)
        else:
            answers = [SemanticFacts(status="skipped", reason=skip)] * len(missing)
            if missing:
                self.telemetry["semantic.skipped"] = {skip: len(missing)}
        for i, fact in zip(missing, answers, strict=True):
            if syntax is not None and i in calls:
                answer = syntax.result(calls.index(i), deadline)
                fact = _fallback(fact, answer, self._outside_by(deadline))
            facts[i] = fact
        cut = next((f.reason for f in asked if _cut_by_budget(f)), None)
        if cut is not None and not self.warm:
            self.memo.mark_not_ready(cut)
        timed_out = sum(1 for f in asked if f.status == "failed" and _cut_by_budget(f))
        if timed_out:  # "semantic failed 26" alone reads as broken; this was the clock
            budget = f"{self.settings.budget_ms:.0f} ms"
            self.telemetry["semantic.failed"] = {f"no answer within its {budget}": timed_out}
        fresh = {keys[i]: facts[i] for i in missing if i in keys and facts[i].status == "applied"}
        complete = len(keys) == len(code) and all(facts[i].status == "applied" for i in code)
        self.memo.put(fresh, every_hit_known=complete)
        self.counters = RunCounters(
            semantic_cached=len(code) - len(missing), semantic_asked=len(asked)
        )
        return facts

    def _not_ready_reason(self) -> str:
        budget = f"{self.settings.budget_ms:.0f} ms"
        return f"not asked: Pyrefly was not ready within {budget} in an earlier search of this tree"

    def _ask(self, hits: list[Finding], deadline: float) -> list[SemanticFacts]:
        if not hits:
            return []
        server = self._ensure_server()
        failure = self._unavailable(server, deadline)
        if failure is not None or server is None:
            failed = SemanticFacts(status="failed", reason=failure or "pyrefly not installed")
            return [failed] * len(hits)
        asks = [Ask(f, self._source(f.file)) for f in hits]
        questions = Questions(self.root, server, self._source)
        versions = questions.sync(asks)
        questions.positions(asks, deadline)
        if server.indexing:  # without the workspace index references stay within open files
            questions.references(asks, deadline)
        questions.diagnostics(asks, versions, deadline)
        with self._files_lock:
            mine = {str(Path(self.root) / rel) for rel in self._files}
        server.trim(keep=mine)
        return [ask.facts() for ask in asks]

    def _prepare(self) -> None:
        """In the background: the fingerprint, then, unless every answer is known (or, in a
        one-shot search, the tree's fresh server was not ready in time before), the server:
        started now, it spends its own start (the interpreter query) beside classification."""
        self.memo.compute()
        if self.memo.every_hit_known:
            return
        if self.warm or self.memo.not_ready is None:
            self._ensure_server()

    def _ensure_server(self) -> PyreflyServer | None:
        with self._server_lock:
            if not self._server_asked:
                self._server_asked = True
                self.server = pool().get(self.root, indexing=self.indexing)
            return self.server

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

    def _source(self, rel: str) -> SourceFile | None:
        with self._files_lock:
            if rel not in self._files:
                self._files[rel] = self.corpus.source(rel, "python")
            return self._files[rel]


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
    reason = "; ".join(r for r in (fact.reason, "syntax resolution: time budget") if r)
    status = "degraded" if fact.status == "applied" else fact.status
    return msgspec.structs.replace(fact, status=status, reason=reason)


def _cut_by_budget(facts: SemanticFacts) -> bool:
    reason = facts.reason or ""
    return facts.status != "applied" and any(p in reason for p in BUDGET_PHRASES)


def _with_semantic(finding: Finding, facts: SemanticFacts) -> Finding:
    enrichment = finding.enrichment
    if enrichment is None:
        return finding
    stages = enrichment.stages or StageStatus()
    return msgspec.structs.replace(
        finding,
        enrichment=msgspec.structs.replace(
            enrichment,
            semantic=facts,
            stages=msgspec.structs.replace(stages, semantic=facts.status),
        ),
    )
