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

import time

import msgspec

from cq.cancel import Check, never
from cq.enrich import standby
from cq.enrich.agreement import adjust_confidence
from cq.enrich.bindings import Bindings
from cq.enrich.computed import (
    QUOTA_SUFFIX,
    Computed,
    EnrichSettings,
    ShownFiles,
    compute_hit,
    store_key,
)
from cq.enrich.stages import QUOTA
from cq.enrich.store import EnrichmentStore
from cq.enrich.telemetry import EnrichTelemetry
from cq.model import Enrichment, Finding, RunCounters, Telemetry
from cq.model.finding import scope_read
from cq.parse import Corpus

HIT_BOUND = "hit bound"  # past ``max_hits``: the reason a hit is left unenriched


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
    (``cq.enrich.share``); the outcome is the same."""
    bound = time.perf_counter()
    bindings = Bindings(corpus, shown, settings.tuning, settings.use_store)
    files = ShownFiles(corpus.source)
    store = EnrichmentStore(settings.tuning, settings.caps, settings.use_store)
    keys = [k for f in shown if (k := store_key(f, files, settings))]
    store.prefetch(keys + [k + QUOTA_SUFFIX for k in keys])
    from cq.enrich.share import Share  # a cold search's: a warm one's hits are stored

    share = Share.start(shown, files, store, bindings, settings, standby.take)
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
                book(hit, store, telemetry, per_hit)
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
            enrich_standby=helped if share is not None and share.by_standby else 0,
        ),
        per_hit=tuple(per_hit),
    )


def _enrich_one(
    finding: Finding,
    files: ShownFiles,
    store: EnrichmentStore,
    settings: EnrichSettings,
    telemetry: EnrichTelemetry,
    per_hit: list[HitTimings],
    *,
    libcst_limit: str | None,
) -> Enrichment:
    source = files.source(finding)
    key = store_key(finding, files, settings)
    if key is not None and libcst_limit == QUOTA:
        key += QUOTA_SUFFIX
    if source is None or key is None:
        return Enrichment(status="skipped", degrade_reasons=("file unreadable",))
    stored = store.get(key)
    if stored is not None:
        telemetry.counters["enrich.store_hits"] += 1
        return stored
    computed = compute_hit(-1, finding, key, files, settings, libcst_limit)
    book(computed, store, telemetry, per_hit)
    return computed.enrichment


def book(
    computed: Computed,
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


def _libcst_limit(settings: EnrichSettings, elapsed_ms: float, runs: int) -> str | None:
    if runs >= settings.tuning.libcst_hits:
        return QUOTA
    deadline = settings.tuning.budget_ms
    return "time budget" if deadline is not None and elapsed_ms > deadline / 2 else None


def _ran_libcst(enrichment: Enrichment) -> int:
    """1 when LibCST ran for this hit (now or in the run that stored it)."""
    stages = enrichment.stages
    return int(stages is not None and stages.libcst in ("applied", "degraded"))
