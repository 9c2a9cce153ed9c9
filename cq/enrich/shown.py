"""Enrich the findings a report will show, within a time budget, from the store when warm.

In: the search's ``Corpus`` and the shown findings, best first. Out: ``EnrichOutcome`` — the
findings with Python ``symtable`` flags (``bindings``) and ``enrichment`` set (and confidence
moved by agreement), telemetry counts, stage timings, counters, and per-hit stage timings
for ``bench/``.

Bounds (``cq.model.tuning.EnrichTuning``), all counts, so that identical searches get
identical output whatever the machine's load: ``max_hits`` (default 200) hits are enriched,
in rank order, the rest left unenriched (status ``skipped``, reason ``hit bound``: a huge
``--limit 0`` search); LibCST runs for at most ``libcst_hits`` hits (default 40, more than the
default limit); ``max_payload_bytes`` (default 4096) per hit, see ``budget``. A wall-time
deadline only when the user sets one (``budget_ms``: ``CQ_ENRICH_BUDGET_MS`` or a profile's
``[enrich]``): past half of it LibCST is skipped, past all of it the remaining hits are left
unenriched (reason ``time budget``). A first question on a large tree runs LibCST for
``cold_libcst_hits`` hits only (``cold_start``). Results that ran every stage are kept in cq's cache
(``store``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import msgspec

from cq import forked
from cq.cancel import Check, never
from cq.classify import helper_pool
from cq.enrich.agreement import adjust_confidence
from cq.enrich.bindings import Bindings, compile_tables
from cq.enrich.budget import enforce_budget
from cq.enrich.nodes import HitSpan
from cq.enrich.python import PythonHit, enrich_python
from cq.enrich.rust import enrich_rust
from cq.enrich.stages import QUOTA, StageRunner
from cq.enrich.store import EnrichmentStore
from cq.enrich.telemetry import EnrichTelemetry
from cq.model import Enrichment, Finding, Language, RunCounters, Telemetry
from cq.model.finding import scope_read
from cq.model.tuning import EnrichTuning, ParseTuning
from cq.parse import Corpus, SourceFile
from cq.settings import Settings

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

# A payload LibCST's hit quota left without stage 4 is stored apart from the full one: each
# search reads exactly the variant its own (deterministic) quota decision asks for.
_QUOTA_SUFFIX = ":libcst-quota"
HIT_BOUND = "hit bound"  # past ``max_hits``: the reason a hit is left unenriched


class EnrichSettings(msgspec.Struct, frozen=True, kw_only=True):
    """The tuned budgets and caps, the cross-check switch, and whether to use the store."""

    tuning: EnrichTuning = msgspec.field(default_factory=EnrichTuning)
    caps: ParseTuning = msgspec.field(default_factory=ParseTuning)
    crosscheck: bool = False
    use_store: bool = True

    @classmethod
    def of(cls, settings: Settings, use_store: bool = True) -> EnrichSettings:
        """The search's settings' part for this stage (resolved at its front: the profile's
        groups with their environment overrides, the cross-check switch)."""
        return cls(
            tuning=settings.tuning.enrich,
            caps=settings.tuning.parse,
            crosscheck=settings.crosscheck,
            use_store=use_store,
        )


class HitTimings(msgspec.Struct, frozen=True):
    """Stage wall times of one computed (not stored) hit, in milliseconds."""

    language: str
    stages_ms: dict[str, float]


class EnrichOutcome(msgspec.Struct, frozen=True, kw_only=True):
    findings: list[Finding]
    telemetry: Telemetry
    timings_ms: dict[str, float]
    counters: RunCounters
    per_hit: tuple[HitTimings, ...] = ()


def enrich_shown(
    corpus: Corpus,
    shown: list[Finding],
    settings: EnrichSettings,
    check: Check = never,
) -> EnrichOutcome:
    """Enrich ``shown`` in rank order; ``check`` runs before each hit and may raise to
    cancel. A cold search large enough hands a share of the files to a forked helper
    (``_Share``); the outcome is the same."""
    bound = time.perf_counter()
    bindings = Bindings(corpus, shown, settings.tuning, settings.use_store)
    files = _Files(corpus.source)
    store = EnrichmentStore(settings.tuning, settings.caps, settings.use_store)
    keys = [k for f in shown if (k := _store_key(f, files, settings))]
    store.prefetch(keys + [k + _QUOTA_SUFFIX for k in keys])
    share = _Share.start(shown, files, store, bindings, settings)
    bindings_ms = (time.perf_counter() - bound) * 1000
    started = time.perf_counter()
    telemetry = EnrichTelemetry()
    per_hit: list[HitTimings] = []
    out = list(shown)
    libcst_runs = 0
    deadline = settings.tuning.budget_ms
    done: dict[int, Enrichment] = {}
    helped = 0
    try:
        for index in range(len(shown)):
            check()
            finding = shown[index]
            elapsed = (time.perf_counter() - started) * 1000
            if share is not None and index in share.hits:
                continue  # the helper's: booked below, in rank order
            if index >= settings.tuning.max_hits:
                enrichment = Enrichment(status="skipped", degrade_reasons=(HIT_BOUND,))
            elif deadline is not None and elapsed > deadline:
                enrichment = Enrichment(status="skipped", degrade_reasons=("time budget",))
            else:
                enrichment = _enrich_one(
                    finding,
                    files,
                    store,
                    settings,
                    telemetry,
                    per_hit,
                    libcst_limit=_libcst_limit(settings, elapsed, libcst_runs),
                )
                libcst_runs += _ran_libcst(enrichment)
            done[index] = enrichment
        own = [d for d in bindings.missing() if share is None or d not in share.digests]
        compiled = bindings.compile(own)
        if share is not None:
            shared, helped = share.finish(check)
            compiled |= shared.symbols
            for hit in shared.hits:
                _book(hit, store, telemetry, per_hit)
                done[hit.index] = hit.enrichment
    except BaseException:
        if share is not None:
            share.abandon()
        raise
    for index, enrichment in sorted(done.items()):
        finding = shown[index]
        telemetry.record(finding.language, enrichment)
        out[index] = msgspec.structs.replace(
            finding,
            enrichment=enrichment,
            confidence=adjust_confidence(finding.confidence, enrichment.agreement, settings.tuning),
            containing_scope=_scope(finding, enrichment),
        )
    bound = time.perf_counter()
    out = bindings.attach(out, compiled)
    bindings_ms += (time.perf_counter() - bound) * 1000
    store.flush()
    return EnrichOutcome(
        findings=out,
        telemetry=telemetry.summary(),
        timings_ms={"bindings": round(bindings_ms, 1)} | telemetry.run_timings(),
        counters=RunCounters(
            symtable_compiled=len(compiled),
            enrich_store_hits=telemetry.counters["enrich.store_hits"],
            enrich_computed=telemetry.counters["enrich.computed"],
            enrich_helper=helped,
        ),
        per_hit=tuple(per_hit),
    )


class _Computed(msgspec.Struct, frozen=True, array_like=True):
    """One hit enriched from its file (not the store): what ``_book`` keeps of it."""

    index: int
    language: Language
    key: str
    enrichment: Enrichment
    stages_ms: dict[str, float]
    complete: bool


class _Shared(msgspec.Struct, frozen=True, array_like=True):
    """What the helper sends back: its hits, and its files' symbol tables by digest."""

    hits: list[_Computed]
    symbols: dict[str, dict[str, dict[str, int]]]


class _Share:
    """The hits and symbol tables of the shown files, computed with a helper while this
    process computes its part: a cold search's enrichment is three parses of each shown file
    (ast-grep, tree-sitter, symtable) holding the interpreter lock, ~0.3 CPU-s for
    'register' on the stdlib, and LibCST for some hits. Every hit's enrichment is a pure
    function of its file, position and settings, so who computes it changes nothing, as
    long as no hit's settings depend on the hits before it: not with a wall-time budget,
    nor with a LibCST hit quota that only some of the hits reach.

    A process that may fork takes turns with a forked child at the files, the largest first
    (``cq.forked.Turns``: a file's cost depends on its hits' stages, LibCST's above all, which
    no split decided in advance can weigh); a long-lived process hands its pool's worker the
    second side of a split by size (``_Pooled``)."""

    def __init__(
        self,
        helper: _Helper | forked.Turns,
        hits: dict[int, str],
        digests: set[str],
        work: Callable[[list[str]], _Shared],
        paths: list[str],
    ) -> None:
        self.helper, self.hits, self.digests, self.work = helper, hits, digests, work
        self.paths = paths  # the files the helper takes turns at, or those of its side

    @classmethod
    def start(
        cls,
        shown: list[Finding],
        files: _Files,
        store: EnrichmentStore,
        bindings: Bindings,
        settings: EnrichSettings,
    ) -> _Share | None:
        t = settings.tuning
        count = min(len(shown), t.max_hits)
        if t.budget_ms is not None or 0 < t.libcst_hits < count:
            return None
        # a process that may fork forks a helper; a long-lived one hands its pool the share
        can_fork = forked.possible()
        pooled = None if can_fork else helper_pool()
        if not can_fork and pooled is None:
            return None
        limit = QUOTA if t.libcst_hits == 0 else None  # the same for every hit
        todo: dict[int, tuple[str, str]] = {}  # hit -> its file, its store key
        sizes: dict[str, int] = {}  # the files to parse -> their bytes
        for index in range(count):
            source = files.source(shown[index])
            key = _store_key(shown[index], files, settings)
            if source is not None and key is not None:
                key += _QUOTA_SUFFIX if limit == QUOTA else ""
                if store.get(key) is None:
                    todo[index] = (source.path, key)
                    sizes[source.path] = len(source.data)
        tables = {d: bindings.sources[rel] for d, rel in bindings.missing().items()}
        sizes |= {s.path: len(s.data) for s in tables.values() if s is not None}
        if len(sizes) < 2 or sum(sizes.values()) < t.helper_min_bytes:
            return None

        def work(paths: list[str]) -> _Shared:
            """The hits and tables of ``paths``' files (here or in the helper)."""
            wanted = set(paths)
            computed = [
                _compute(i, shown[i], key, files, settings, limit)
                for i, (path, key) in todo.items()
                if path in wanted
            ]
            digests = sorted(d for d, s in tables.items() if s is not None and s.path in wanted)
            return _Shared(computed, bindings.compile(digests))

        if pooled is None:
            order = sorted(sizes, key=lambda p: (-sizes[p], p))
            turns = forked.Turns.start(
                len(order), lambda k: msgspec.msgpack.encode(work([order[k]]))
            )
            if turns is None:
                return None
            hits = {i: key for i, (_, key) in todo.items()}
            digests = {d for d, s in tables.items() if s is not None}
            return cls(turns, hits, digests, work, order)
        theirs = _split(sizes)
        hits = {i: key for i, (path, key) in todo.items() if path in theirs}
        tabled = sorted(d for d, s in tables.items() if s is not None and s.path in theirs)
        todo_items = [(i, shown[i], k) for i, k in hits.items()]
        given = {f.file: s for f in (shown[i] for i in hits) if (s := files.source(f))}
        started = _Pooled.submit(pooled, todo_items, given, bindings.files(tabled), settings, limit)
        return None if started is None else cls(started, hits, set(tabled), work, sorted(theirs))

    def finish(self, check: Check) -> tuple[_Shared, int]:
        """Every share hit and table (those the helper computed, and with a forked helper
        this process's turns, taken now), and how many hits the helper computed; what a
        failed helper left is computed here (the same values)."""
        if isinstance(self.helper, forked.Turns):
            return self._take_turns(self.helper, check)
        blob = self.helper.result()
        if blob is not None:
            with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
                shared = msgspec.msgpack.decode(blob, type=_Shared)
                return shared, len(shared.hits)
        return self.work(self.paths), 0

    def _take_turns(self, turns: forked.Turns, check: Check) -> tuple[_Shared, int]:
        hits: list[_Computed] = []
        symbols: dict[str, dict[str, dict[str, int]]] = {}
        done: set[str] = set()
        while (k := turns.take()) is not None:
            check()
            mine = self.work([self.paths[k]])
            hits += mine.hits
            symbols |= mine.symbols
            done.add(self.paths[k])
        theirs: list[_Shared] | None = None
        with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
            blobs = turns.finish()
            if blobs is not None:
                theirs = [msgspec.msgpack.decode(b, type=_Shared) for b in blobs.values()]
        helped = 0
        for shared in theirs or ():
            hits += shared.hits
            symbols |= shared.symbols
            helped += len(shared.hits)
        if theirs is None:  # the helper failed: its files are this process's
            rest = self.work([p for p in self.paths if p not in done])
            hits += rest.hits
            symbols |= rest.symbols
        return _Shared(sorted(hits, key=lambda h: h.index), symbols), helped

    def abandon(self) -> None:
        if isinstance(self.helper, forked.Turns):
            self.helper.abandon()
        else:
            self.helper.kill()


class _Helper(Protocol):
    """A helper computing a share: a forked child, or a pool worker's task."""

    def result(self) -> bytes | None: ...

    def kill(self) -> None: ...


class _Pooled:
    """A share run by a worker of the long-lived process's pool (``cq.classify.pool``,
    forked by its fork server): the hits, their files and the symbol tables' files go with
    it, as the worker has none of this search's state."""

    def __init__(self, future: Future[bytes]) -> None:
        self.future = future

    @classmethod
    def submit(
        cls,
        pool: ProcessPoolExecutor,
        hits: list[tuple[int, Finding, str]],
        given: dict[str, SourceFile],
        tables: list[tuple[str, SourceFile]],
        settings: EnrichSettings,
        limit: str | None,
    ) -> _Pooled | None:
        try:
            return cls(pool.submit(_pooled_share, hits, given, tables, settings, limit))
        except Exception:  # a pool that is shut down or broken: this process does it all
            return None

    def result(self) -> bytes | None:
        try:
            return self.future.result()
        except Exception:  # a worker that died: the caller computes the share itself
            return None

    def kill(self) -> None:
        self.future.cancel()


def _pooled_share(
    hits: list[tuple[int, Finding, str]],
    given: dict[str, SourceFile],
    tables: list[tuple[str, SourceFile]],
    settings: EnrichSettings,
    limit: str | None,
) -> bytes:
    """In a pool worker: the share's hits enriched and its tables compiled, encoded."""
    files = _Files(lambda rel, _language: given.get(rel))
    computed = [_compute(i, finding, key, files, settings, limit) for i, finding, key in hits]
    return msgspec.msgpack.encode(_Shared(computed, compile_tables(tables)))


def _split(sizes: dict[str, int]) -> set[str]:
    """The files of the helper's side: the largest first, each to the lighter side."""
    sides: tuple[list[str], list[str]] = ([], [])
    loads = [0, 0]
    for path in sorted(sizes, key=lambda p: (-sizes[p], p)):
        side = 0 if loads[0] <= loads[1] else 1
        sides[side].append(path)
        loads[side] += sizes[path]
    return set(sides[1])


def _enrich_one(
    finding: Finding,
    files: _Files,
    store: EnrichmentStore,
    settings: EnrichSettings,
    telemetry: EnrichTelemetry,
    per_hit: list[HitTimings],
    *,
    libcst_limit: str | None,
) -> Enrichment:
    source = files.source(finding)
    key = _store_key(finding, files, settings)
    if key is not None and libcst_limit == QUOTA:
        key += _QUOTA_SUFFIX
    if source is None or key is None:
        return Enrichment(status="skipped", degrade_reasons=("file unreadable",))
    stored = store.get(key)
    if stored is not None:
        telemetry.counters["enrich.store_hits"] += 1
        return stored
    computed = _compute(-1, finding, key, files, settings, libcst_limit)
    _book(computed, store, telemetry, per_hit)
    return computed.enrichment


def _compute(
    index: int,
    finding: Finding,
    key: str,
    files: _Files,
    settings: EnrichSettings,
    libcst_limit: str | None,
) -> _Computed:
    """The hit enriched from its (readable) file: a pure function, run here or in the
    helper."""
    source = files.source(finding)
    assert source is not None
    runner = StageRunner()
    span = files.span(source, finding)
    if finding.language == "python":
        lines = files.lines(source)
        hit = PythonHit(source, span, finding.text, lines, settings.tuning, settings.caps)
        enrichment = enrich_python(
            hit, runner, libcst_limit=libcst_limit, crosscheck=settings.crosscheck
        )
    else:
        enrichment = enrich_rust(source, span, runner, settings.caps.macro_depth)
    enrichment = enforce_budget(enrichment, settings.tuning.max_payload_bytes)
    return _Computed(
        index, finding.language, key, enrichment, dict(runner.timings_ms), runner.complete
    )


def _book(
    computed: _Computed,
    store: EnrichmentStore,
    telemetry: EnrichTelemetry,
    per_hit: list[HitTimings],
) -> None:
    """Count a computed hit, and store it unless the clock stopped a stage."""
    telemetry.counters["enrich.computed"] += 1
    telemetry.time(computed.language, computed.stages_ms)
    per_hit.append(HitTimings(computed.language, computed.stages_ms))
    if computed.complete:
        store.put(computed.key, computed.enrichment)


def _scope(finding: Finding, enrichment: Enrichment) -> str | None:
    """The hit's scope: classification's, or for a Python hit the lexer alone decided (a
    string or comment in a file classification did not parse) the scope chain the parse here
    read, as classification writes it ("Outer.method"): the function that raises or logs
    a message is what a message search answers with."""
    if finding.containing_scope is not None or finding.tier != "heuristic":
        return finding.containing_scope
    if finding.language != "python" or not scope_read(enrichment):
        return None
    return ".".join(enrichment.scope_chain) or None


def cold_start(settings: EnrichSettings) -> EnrichSettings:
    """The settings of a first question on a large tree, whose index is being built behind
    it (``cq.index``): LibCST for ``cold_libcst_hits`` hits only, its import and metadata
    being most of such a question's enrichment; later questions have LibCST's facts."""
    quota = settings.tuning.cold_libcst_hits
    tuning = msgspec.structs.replace(settings.tuning, libcst_hits=quota)
    return msgspec.structs.replace(settings, tuning=tuning)


def _store_key(finding: Finding, files: _Files, settings: EnrichSettings) -> str | None:
    """Content hash, position and the settings that change the payload."""
    source = files.source(finding)
    if source is None:
        return None
    place = f"{finding.line}:{finding.col}:{finding.end_col}"
    return f"{source.digest}:{place}:{int(settings.crosscheck)}:{settings.tuning.max_payload_bytes}"


def _libcst_limit(settings: EnrichSettings, elapsed_ms: float, runs: int) -> str | None:
    if runs >= settings.tuning.libcst_hits:
        return QUOTA
    deadline = settings.tuning.budget_ms
    return "time budget" if deadline is not None and elapsed_ms > deadline / 2 else None


def _ran_libcst(enrichment: Enrichment) -> int:
    """1 when LibCST ran for this hit (now or in the run that stored it)."""
    stages = enrichment.stages
    return int(stages is not None and stages.libcst in ("applied", "degraded"))


class _Files:
    """The shown hits' files (the search's corpus's, or those a pool worker was handed),
    with their line tables."""

    def __init__(self, lookup: Callable[[str, Language], SourceFile | None]) -> None:
        self.lookup = lookup
        self.starts: dict[str, list[int]] = {}

    def source(self, finding: Finding) -> SourceFile | None:
        return self.lookup(finding.file, finding.language)

    def lines(self, source: SourceFile) -> list[str]:
        """The file's lines (``SourceFile.lines``), one empty line when it is not UTF-8."""
        return source.lines() or [""]

    def span(self, source: SourceFile, finding: Finding) -> HitSpan:
        if source.path not in self.starts:
            self.starts[source.path] = source.line_starts()
        starts = self.starts[source.path]
        line_start = starts[min(finding.line, len(starts)) - 1]
        # line_text may be clipped around the match, so measure the column in the file's line.
        line_end = source.data.find(b"\n", line_start)
        line = source.data[line_start : line_end if line_end >= 0 else len(source.data)]
        byte_col = len(line.decode("utf-8", errors="replace")[: finding.col].encode("utf-8"))
        byte_len = len(finding.text.encode("utf-8"))
        return HitSpan(
            row=finding.line - 1,
            col=finding.col,
            end_col=finding.end_col,
            byte_start=line_start + byte_col,
            byte_end=line_start + byte_col + byte_len,
        )
