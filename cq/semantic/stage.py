"""The semantic stage of one search: ask Pyrefly about each shown Python hit, within a budget.

``SemanticRun.begin`` (right after rg, before classification) starts a background thread that
fingerprints the tree for the answer cache (``memo.py``); unless the cache says this very
search was answered before, it gets the root's server from the pool (starting it when
there is none) and opens the Python files with the most hits, so Pyrefly checks them while cq
classifies. ``apply`` (after enrichment) takes the answers it can from the cache and asks
Pyrefly the rest (``questions.py``); nothing waits past ``budget_ms`` from the start of
``apply``. Complete answers go to the cache, so a repeated search is identical and fast.

Status per hit: ``applied`` when every answer came; ``degraded`` when some did not (the
reason says which: a request error, the time budget, references asked before indexing
ended — these are the only timing-dependent results, they say so, and they are asked again
next time); ``failed`` when the server is missing, dead or silent; ``skipped`` for hits that
are not code (comments, strings). Other stages' output never changes.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path

import msgspec

from cq.enrich import EnrichOutcome
from cq.model import (
    Finding,
    Pattern,
    RawMatch,
    RunCounters,
    SearchRequest,
    SemanticDefinition,
    SemanticFacts,
    StageStatus,
)
from cq.parse import Corpus, SourceFile
from cq.semantic.fallback import SyntaxPass
from cq.semantic.memo import AnswerMemo
from cq.semantic.pool import pool
from cq.semantic.questions import Ask, Questions
from cq.semantic.ranking import refine_order
from cq.semantic.rpc import RpcError
from cq.semantic.server import PyreflyServer, pyrefly_binary
from cq.semantic.settings import SemanticSettings

CODE_CATEGORIES = frozenset(
    {"definition", "callsite", "import", "from_import", "reference", "assignment", "annotation"}
)
PREOPEN_FILES = 40  # files opened while classification runs: more than a 30-hit report spans


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
        self.memo = AnswerMemo(
            request, pyrefly_binary() if active else None, enabled=settings.cache
        )
        self._files: dict[str, SourceFile | None] = {}
        self._files_lock = threading.Lock()
        self._server_lock = threading.Lock()
        self._server_asked = False
        self._opener: threading.Thread | None = None

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
        python = [m for m in matches if m.language == "python"]
        run = cls(settings, request, active=settings.enabled and bool(python), corpus=corpus)
        if run.active:
            hits = Counter(m.file for m in python)  # most hits first: likeliest to be shown
            files = sorted(hits, key=lambda f: (-hits[f], f))[:PREOPEN_FILES]
            run._opener = threading.Thread(
                target=run._prepare, args=(files,), name="cq-lsp-open", daemon=True
            )
            run._opener.start()
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
        calls = [i for i in missing if hits[i].category == "callsite"]
        syntax = SyntaxPass(self.root, self._source, [hits[i] for i in calls]) if calls else None
        for i, fact in zip(missing, self._ask([hits[i] for i in missing], deadline), strict=True):
            if syntax is not None and i in calls:
                fact = _fallback(fact, syntax.result(calls.index(i), deadline))
            facts[i] = fact
        fresh = {keys[i]: facts[i] for i in missing if i in keys and facts[i].status == "applied"}
        complete = len(keys) == len(code) and all(facts[i].status == "applied" for i in code)
        self.memo.put(fresh, every_hit_known=complete)
        self.counters = RunCounters(
            semantic_cached=len(code) - len(missing), semantic_asked=len(missing)
        )
        return facts

    def _ask(self, hits: list[Finding], deadline: float) -> list[SemanticFacts]:
        if not hits:
            return []
        server = self._ensure_server()
        failure = self._unavailable(server, deadline)
        if failure is not None or server is None:
            failed = SemanticFacts(status="failed", reason=failure or "pyrefly not installed")
            return [failed] * len(hits)
        asks = [Ask(f, self._source(f.file)) for f in hits]
        if self._opener is not None:  # its didOpens would cancel requests sent meanwhile
            self._opener.join(max(deadline - time.monotonic(), 0.0))
        questions = Questions(self.root, server, self._source)
        versions = questions.sync(asks)
        questions.positions(asks, deadline)
        questions.references(asks, deadline)
        questions.diagnostics(asks, versions, deadline)
        with self._files_lock:
            mine = {str(Path(self.root) / rel) for rel in self._files}
        server.trim(keep=mine)
        return [ask.facts() for ask in asks]

    def _prepare(self, files: list[str]) -> None:
        """In the background: the fingerprint, then, unless every answer is known, the
        server and the files it should check before the questions come."""
        self.memo.compute()
        if not self.memo.complete():
            self._ensure_server()
            self._preopen(files)

    def _ensure_server(self) -> PyreflyServer | None:
        with self._server_lock:
            if not self._server_asked:
                self._server_asked = True
                self.server = pool().get(self.root)
            return self.server

    def _unavailable(self, server: PyreflyServer | None, deadline: float) -> str | None:
        if server is None:
            return "pyrefly not installed"
        if not server.initialized.wait(max(deadline - time.monotonic(), 0.0)):
            return "server not ready within the time budget"
        if server.error:
            return server.error
        if not server.alive():
            return "server exited" + (f": {server.stderr_tail()}" if server.stderr_tail() else "")
        return None

    def _preopen(self, files: list[str]) -> None:
        server = self.server
        if server is None or not server.initialized.wait(10.0) or server.error:
            return
        for rel in files:
            source = self._source(rel)
            if source is not None and source.text is not None and server.alive():
                try:
                    server.sync(str(Path(self.root) / rel), source.text, source.digest)
                except (RpcError, AssertionError):
                    return

    def _source(self, rel: str) -> SourceFile | None:
        with self._files_lock:
            if rel not in self._files:
                self._files[rel] = self.corpus.source(rel, "python")
            return self._files[rel]


def _fallback(fact: SemanticFacts, syntax: tuple[bool, SemanticDefinition | None]) -> SemanticFacts:
    """A callsite Pyrefly left without a definition takes cq's own reading of the source,
    when it is certain (``syntax_resolve.py``, marked ``via: syntax``); one the syntax pass
    had no time for is ``degraded`` (asked again next time, never cached as answered). A hit
    Pyrefly failed on (missing, dead, silent) gets nothing: a failed stage changes no other
    output (Top Contexts groups resolved callsites)."""
    if fact.definition is not None or fact.status == "failed":
        return fact
    ready, found = syntax
    if not ready:
        reason = "; ".join(r for r in (fact.reason, "syntax resolution: time budget") if r)
        status = "degraded" if fact.status == "applied" else fact.status
        return msgspec.structs.replace(fact, status=status, reason=reason)
    return fact if found is None else msgspec.structs.replace(fact, definition=found)


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
