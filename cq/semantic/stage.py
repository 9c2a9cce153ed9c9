"""The semantic stage of one search: what Pyrefly said about each shown Python hit, from the cache.

A search shows the answers cq's cache (``memo.py``) holds when the stage looks them up, and
no other: the same cache gives the same report, whatever the machine's load. A shown hit not
in the cache is ``pending``; the report counts them (``Summary.semantic``). Who asks for them:

- a long-lived cq (``cq mcp``, cq's server: ``pool.keep_warm``) hands them to its background
  thread (``later.py``), which asks the root's warm server (``asking.py``) and stores the
  answers; a later search shows them. The report never waits for it.
- a one-shot search asks nobody and starts no Pyrefly: a fresh server, started beside
  classification, answered nothing within the tens of milliseconds an agent would not
  notice (``cq search --semantic-wait 60000``: a fresh server's answers came tenths of a
  second after enrichment; ``bench/results/semantic-figures.md``), and its start costs CPU
  that the search would pay for nothing.
- a search told to wait (``wait_ms``: ``CQ_SEMANTIC_WAIT_MS`` or ``[semantic] wait_ms``)
  asks in the foreground and shows what came within the wait (then the report depends on
  the clock, as the user asked); what came is stored too.
- a search whose order and Answer depend on the answers (``orders``: a callers question, a
  dotted name, where ``ranking.py`` moves resolved hits first) waits for them as if told to,
  up to ``[semantic] order_wait_ms``: otherwise its first run would order by name and a later
  one, the background's answers in, by resolution. Same command, same tree, same report; an
  answer the clock cut makes the JSON ``answer`` provisional.

``SemanticRun.begin`` (right after rg) starts nothing: the root's server is started (or
reused) when an answer is missing, after enrichment; in a long-lived process right after
ranking (``prepare``), which also opens the shown hits' files so Pyrefly reads them while
enrichment runs. No file is opened before asking:
Pyrefly checks every opened file (and what it imports) before it answers anything. ``apply``
(after enrichment) reads the cache: an answer is taken while the files it names are
unchanged (``memo.py``).

Status per hit: ``applied`` when every answer came; ``degraded`` when some did not (the
reason says which); ``failed`` when Pyrefly is not installed, or, in a wait, the server is
missing, dead or silent; ``pending`` when not in the cache; ``skipped`` for hits that are not
code (comments, strings). Other stages' output never changes.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from cq.enrich import EnrichOutcome
from cq.model import (
    CODE_CATEGORIES,
    Finding,
    Pattern,
    RawMatch,
    RunCounters,
    Scope,
    SemanticFacts,
    SemanticSummary,
    StageStatus,
    Telemetry,
)
from cq.parse import Corpus, SourceFile
from cq.semantic.memo import AnswerMemo, KnownAnswer
from cq.semantic.pool import pool
from cq.semantic.ranking import refine_order
from cq.semantic.rpc import RpcError
from cq.semantic.server import PyreflyServer, pyrefly_binary
from cq.semantic.unique_name import UniqueNames
from cq.settings import SemanticSettings

if TYPE_CHECKING:  # asking Pyrefly (and cq's syntax reading beside it) is imported when a
    # batch is made: a one-shot search that finds answers missing only marks them pending
    from cq.semantic.asking import Batch

_BACKGROUND = "not in the cache yet: asked in the background, shown from a later search"
# How long ``prepare``'s thread waits for a server it started to come up (its initialize
# times out after 10 s: ``server._INIT_TIMEOUT_S``).
_OPEN_WAIT_S = 15.0
_NOT_ASKED = "not in the cache: a one-shot search does not ask Pyrefly (--semantic-wait does)"


class SemanticRun:
    """One search's use of the stage; ``active`` is False when it is off or has nothing to do."""

    def __init__(
        self,
        settings: SemanticSettings,
        scope: Scope,
        limit: int,
        active: bool,
        corpus: Corpus,
        orders: bool = False,
    ) -> None:
        self.settings = settings
        # How long this search waits for the shown hits' answers: the user's wait, or for a
        # search whose order depends on them, ``order_wait_ms`` (0: none, the cache's alone).
        self.wait_ms = settings.wait_ms or (settings.order_wait_ms if orders else 0.0)
        self.limit = limit  # the findings shown
        self.root = scope.root
        self.corpus = corpus  # the search's files, read once for every stage
        self.active = active
        self.server: PyreflyServer | None = None
        self.telemetry = Telemetry()  # for ``Summary.telemetry``
        self.counters = RunCounters()
        self.summary: SemanticSummary | None = None  # for ``Summary.semantic``
        self.partial = 0  # shown first answers: reference counts and errors still to come
        self.binary = pyrefly_binary(settings.pyrefly) if active else None
        # A long-lived process asks what is missing in the background (``later.py``).
        self.warm = active and pool().warm
        if self.warm and self.wait_ms > 0:  # stopped while searches run (``pool.pause``)
            pool().resume(self.root)
        # The index only where the process keeps its server (cq mcp), so that the same search
        # in the same kind of process always gets the same kind of answer.
        self.indexing = settings.index == "always" or (settings.index == "auto" and pool().warm)
        self.memo = AnswerMemo(
            self.binary, enabled=settings.cache and scope.use_cache, indexing=self.indexing
        )
        self._files: dict[str, SourceFile | None] = {}
        self._files_lock = threading.Lock()
        self._server_lock = threading.Lock()
        self._server_asked = False
        self._unique = UniqueNames(scope, settings.venv)

    @classmethod
    def begin(
        cls,
        scope: Scope,
        limit: int,
        matches: tuple[RawMatch, ...],
        corpus: Corpus,
        settings: SemanticSettings,
        *,
        orders: bool = False,
    ) -> SemanticRun:
        """The run. The root's server starts only when an answer is missing, and then after
        enrichment (the background batch, or a search told to wait): no answer it gives is
        shown by this search, and starting it beside classification took a large share of
        a cold audit search's time (``python -m bench.audit_scale``; figures:
        bench/results/2026-11-29-figures-from-cq.md).
        Files come from the search's ``corpus``."""
        python = any(m.language == "python" for m in matches)
        active = settings.enabled and python
        return cls(settings, scope, limit, active=active, corpus=corpus, orders=orders)

    def apply(self, enriched: EnrichOutcome, limit: int) -> EnrichOutcome:
        """The findings with ``enrichment.semantic`` set on the shown Python ones, and the
        stage's status counts in the telemetry; unchanged when the stage is not active."""
        if not self.active:
            return enriched
        findings = enriched.findings
        started = time.monotonic()
        shown = len(findings) if limit <= 0 else min(limit, len(findings))
        targets = [i for i in range(shown) if findings[i].language == "python"]
        facts = self._facts([findings[i] for i in targets], started)
        out = list(findings)
        for index, fact in zip(targets, facts, strict=True):
            out[index] = _with_semantic(findings[index], fact)
        counts = Counter(f.status for f in facts)
        self.telemetry = self.telemetry.plus(Telemetry(semantic=dict(sorted(counts.items()))))
        pending = counts.get("pending", 0)
        self.summary = SemanticSummary(
            pending=pending, partial=self.partial, asking="background" if self.warm else "none"
        )
        return msgspec.structs.replace(enriched, findings=out)

    def prepare(self, shown: list[Finding]) -> None:
        """Right after ranking, in a long-lived process: when a shown hit's answer is not in
        the cache, the root's server starts now (it did at the end of the search) and opens
        the hits' files, so that Pyrefly (at its lower priority) checks them while
        enrichment runs, and the background batch's first answers come that much sooner.
        Nothing is asked: what this search shows is unchanged."""
        if not (self.active and self.warm) or self.binary is None:
            return
        hits = [f for f in shown if f.language == "python" and f.category in CODE_CATEGORIES]
        keys: dict[str, Finding] = {}
        for hit in hits:
            source = self._source(hit.file)
            key = self.memo.key(hit, source.digest) if source is not None else None
            if key is not None:
                keys[key] = hit
        known = self.memo.get_many(list(keys))
        files = sorted({hit.file for key, hit in keys.items() if key not in known})
        server = self._ensure_server() if files else None
        if server is None:
            return
        opened = [(f, s) for f in files if (s := self._source(f)) is not None]
        threading.Thread(
            target=_open, args=(server, self.root, opened), name="cq-lsp-open", daemon=True
        ).start()

    def rerank(
        self, ranked: list[Finding], patterns: tuple[Pattern, ...], callers: bool
    ) -> list[Finding]:
        """Within the shown prefix, hits resolved to the queried definition first
        (``ranking.refine_order``; ``callers``: the question asks who calls the function);
        unchanged when the stage is not active."""
        if not self.active:
            return ranked
        limit = self.limit
        cut = len(ranked) if limit <= 0 else min(limit, len(ranked))
        shown, counts = refine_order(ranked[:cut], patterns, callers)
        if counts is not None:
            self.telemetry = self.telemetry.plus(Telemetry(semantic_target=counts))
        return shown + ranked[cut:]

    # -- the work --------------------------------------------------------------------------

    def _facts(self, hits: list[Finding], started: float) -> list[SemanticFacts]:
        """Facts per hit: from the cache when known; the rest pending (asked in the
        background by a long-lived cq), or asked now when the user asked to wait."""
        code = [i for i, f in enumerate(hits) if f.category in CODE_CATEGORIES]
        keys: dict[int, str] = {}
        for i in code:
            source = self._source(hits[i].file)
            key = self.memo.key(hits[i], source.digest) if source is not None else None
            if key is not None:
                keys[i] = key
        known = self._holding(self.memo.get_many(list(keys.values())))
        facts = [SemanticFacts(status="skipped", reason="not code")] * len(hits)
        for i, key in keys.items():
            if key in known:
                facts[i] = known[key].facts
        missing = [i for i in code if keys.get(i) not in known]
        # first answers (type, definition) shown, their reference counts and errors still to
        # come: asked again in the background (a batch still asking them adds nothing); in
        # a one-shot search the user told to wait, now (nothing else would ask them). Not
        # for an order's wait: the order reads the definitions, which are in.
        partial = [i for i in code if i not in missing and not known[keys[i]].complete]
        if self.settings.wait_ms > 0 and not self.warm and self.binary is not None:
            missing, partial = sorted(missing + partial), []
        self.partial = len(partial)
        self.counters = RunCounters(semantic_cached=len(code) - len(missing))
        if self.warm and partial:
            from cq.semantic.later import later

            later().submit(self._batch(hits, partial, keys), self.settings.budget_ms / 1000)
        if not missing:
            return facts
        if self.binary is None:
            for i in missing:
                facts[i] = SemanticFacts(status="failed", reason="pyrefly not installed")
            return facts
        if self.wait_ms > 0:
            from cq.semantic.asking import cut_by_clock

            batch = self._batch(hits, missing, keys)
            answers = batch.run(started + self.wait_ms / 1000)
            for i, fact in zip(missing, answers, strict=True):
                facts[i] = fact
            self._count_cut(answers)
            self.counters = msgspec.structs.replace(self.counters, semantic_asked=len(missing))
            missing = [i for i in missing if cut_by_clock(facts[i])]
        else:
            pending = _BACKGROUND if self.warm else _NOT_ASKED
            for i in missing:
                facts[i] = SemanticFacts(status="pending", reason=pending)
        if self.warm and missing:
            from cq.semantic.later import later

            later().submit(self._batch(hits, missing, keys), self.settings.budget_ms / 1000)
        return facts

    def _holding(self, known: dict[str, KnownAnswer]) -> dict[str, KnownAnswer]:
        """The cached answers whose named files still have the digests they had when asked
        (``memo.KnownAnswer``); the others are missing."""
        named = {rel for answer in known.values() for rel, _ in answer.depends}
        self.corpus.recall(named)  # unchanged files: their digests without a read
        now: dict[str, str] = {}
        for rel in sorted(named):
            digest = self.corpus.digest(rel)
            if digest is None:
                source = self._source(rel)
                digest = source.digest if source is not None else ""
            now[rel] = digest
        return {
            key: answer
            for key, answer in known.items()
            if all(now[rel] == digest for rel, digest in answer.depends)
        }

    def _batch(self, hits: list[Finding], missing: list[int], keys: dict[int, str]) -> Batch:
        from cq.semantic.asking import Batch

        return Batch(
            self.root,
            [hits[i] for i in missing],
            [keys.get(i) for i in missing],
            memo=self.memo,
            source=self._source,
            server=self._ensure_server,
            unique=self._unique,
        )

    def _count_cut(self, answers: list[SemanticFacts]) -> None:
        """A wait's answers the clock cut: "semantic failed 26" alone reads as broken."""
        from cq.semantic.asking import cut_by_clock

        timed_out = sum(1 for f in answers if f.status == "failed" and cut_by_clock(f))
        if timed_out:
            wait = f"{self.wait_ms:.0f} ms"
            cut = {f"no answer within the wait of {wait}": timed_out}
            self.telemetry = self.telemetry.plus(Telemetry(semantic_failed=cut))

    def _ensure_server(self) -> PyreflyServer | None:
        with self._server_lock:
            if not self._server_asked:
                self._server_asked = True
                self.server = pool().get(self.root, self.binary, indexing=self.indexing)
            return self.server

    def _source(self, rel: str) -> SourceFile | None:
        with self._files_lock:
            if rel not in self._files:
                self._files[rel] = self.corpus.source(rel, "python")
            return self._files[rel]


def _open(server: PyreflyServer, root: str, files: list[tuple[str, SourceFile]]) -> None:
    """Open ``files`` in ``server`` once it is up (``SemanticRun.prepare``); a server that
    does not come up within its start-up time opens nothing (the batch finds it so)."""
    if not server.initialized.wait(_OPEN_WAIT_S) or server.error or not server.alive():
        return
    for rel, source in files:
        if source.text is None:
            continue
        try:
            server.sync(str(Path(root) / rel), source.text, source.digest)
        except RpcError:
            return


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
