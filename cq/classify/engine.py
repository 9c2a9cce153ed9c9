"""Classify all hits of a search: cached records first, parse only what is missing."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import msgspec

from cq.cancel import Check, never
from cq.classify.analyze import FileAnalysis, FileTask
from cq.classify.heuristic import guess, python_lexer_is_exact
from cq.classify.lookup import classify_from_records
from cq.classify.records import FileRecords, StoredRecords
from cq.model import Classification, RawMatch
from cq.parse import SourceFile, load_source

RECORDS_VERSION = 3


class ClassifyOutcome(msgspec.Struct, frozen=True):
    classifications: list[Classification]
    counters: dict[str, int]  # volatile: cache hits/misses, files parsed, pool workers
    reasons: dict[str, int]  # stable: why hits stayed text_match / fell to the heuristic


def classify_all(
    root: Path, matches: tuple[RawMatch, ...], *, use_cache: bool = True, check: Check = never
) -> ClassifyOutcome:
    """One classification per match, same order (``check`` may raise to cancel)."""
    by_file: dict[str, list[int]] = defaultdict(list)
    for i, match in enumerate(matches):
        by_file[match.file].append(i)
    counters: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    out: list[Classification | None] = [None] * len(matches)

    sources = {
        rel: load_source(root, rel, matches[ids[0]].language) for rel, ids in by_file.items()
    }
    records = _cached_records(sources, use_cache, counters)
    todo: list[str] = []
    for rel, ids in by_file.items():
        source = sources[rel]
        if source is None:
            reasons["unreadable file"] += len(ids)
            for i in ids:
                out[i] = _heuristic(matches[i], exact=False, reason="unreadable file")
        elif rel not in records:
            if _all_certain(source, [matches[i] for i in ids]):
                counters["files_skipped_by_heuristic"] += 1
                for i in ids:
                    out[i] = _heuristic(matches[i], exact=True, reason=None)
            else:
                todo.append(rel)
    fresh = _analyze(root, todo, sources, counters, check)
    for rel, analysis in fresh.items():
        records[rel] = FileRecords.from_stored(analysis.records)
    if use_cache and fresh:
        _store(sources, fresh)

    for rel, ids in by_file.items():
        if rel not in records:
            continue
        rec = records[rel]
        for i in ids:
            out[i] = _classify(matches[i], rec, reasons)
    _resolve_open_hits(root, matches, by_file, sources, records, out, counters)
    return ClassifyOutcome(
        classifications=[c or Classification() for c in out],
        counters=dict(sorted(counters.items())),
        reasons=dict(sorted(reasons.items())),
    )


def _namespace(language: str) -> str:
    from cq.classify.versions import grammar_versions

    return f"records-v{RECORDS_VERSION}-{language}-{grammar_versions()}"


def _cached_records(
    sources: dict[str, SourceFile | None], use_cache: bool, counters: Counter[str]
) -> dict[str, FileRecords]:
    if not use_cache:
        return {}
    from cq.cache import open_store

    store = open_store()
    decoder = msgspec.msgpack.Decoder(StoredRecords)
    found: dict[str, FileRecords] = {}
    for language in ("python", "rust"):
        wanted = {s.digest: rel for rel, s in sources.items() if s and s.language == language}
        if not wanted:
            continue
        namespace = _namespace(language)
        for digest, blob in store.get_many(namespace, wanted).items():
            try:
                found[wanted[digest]] = FileRecords.from_stored(decoder.decode(blob))
            except (msgspec.DecodeError, msgspec.ValidationError):
                store.delete(namespace, digest)  # corrupt entry: rebuild it
                counters["cache_corrupt"] += 1
    counters["cache_hits"] += len(found)
    counters["cache_misses"] += sum(1 for s in sources.values() if s is not None) - len(found)
    return found


def _store(sources: dict[str, SourceFile | None], fresh: dict[str, FileAnalysis]) -> None:
    from cq.cache import open_store

    encoder = msgspec.msgpack.Encoder()
    store = open_store()
    for language in ("python", "rust"):
        items = {
            sources[rel].digest: encoder.encode(a.records)  # type: ignore[union-attr]
            for rel, a in fresh.items()
            if a.records.language == language
        }
        store.put_many(_namespace(language), items)


def _analyze(
    root: Path,
    todo: list[str],
    sources: dict[str, SourceFile | None],
    counters: Counter[str],
    check: Check,
) -> dict[str, FileAnalysis]:
    if not todo:
        return {}
    from cq.classify.pool import analyze_all

    tasks = [FileTask(str(root / rel), rel, sources[rel].language) for rel in todo]  # type: ignore[union-attr]
    sizes = [len(sources[rel].data) for rel in todo]  # type: ignore[union-attr]
    extra: dict[str, int] = {}
    analyses = analyze_all(tasks, sizes, extra, check)
    counters.update(extra)
    counters["files_parsed"] += len(todo)
    return dict(zip(todo, analyses, strict=True))


def _classify(match: RawMatch, rec: FileRecords, reasons: Counter[str]) -> Classification | None:
    if not match.text:  # an empty regex match (``^``, ``x*``) is a position, not a construct
        return Classification(category="text_match", confidence=0.5, tier="fallback")
    if rec.reason is not None:
        reasons[rec.reason] += 1
        return _heuristic(match, exact=False, reason=rec.reason)
    return classify_from_records(rec, match.byte_start, match.byte_end, match.text)


def _resolve_open_hits(
    root: Path,
    matches: tuple[RawMatch, ...],
    by_file: dict[str, list[int]],
    sources: dict[str, SourceFile | None],
    records: dict[str, FileRecords],
    out: list[Classification | None],
    counters: Counter[str],
) -> None:
    """Hits records could not decide (non-identifier text in code) go to the node tier."""
    from cq.classify.analyze import analyze_file

    for rel, ids in by_file.items():
        open_ids = [i for i in ids if out[i] is None]
        if not open_ids:
            continue
        source = sources[rel]
        spans = [(matches[i].byte_start, matches[i].byte_end) for i in open_ids]
        task = FileTask(str(root / rel), rel, records[rel].language, spans)
        analysis = analyze_file(task, source.data if source else None)
        counters["node_tier_files"] += 1
        for i, verdict in zip(open_ids, analysis.node_verdicts, strict=True):
            out[i] = verdict


def _all_certain(source: SourceFile, hits: list[RawMatch]) -> bool:
    """Tier 1 decides every hit of this file: no parse needed."""
    if source.language != "python" or not python_lexer_is_exact(source.data):
        return False
    return all(
        not h.line_text.startswith("…")
        and guess("python", h.line_text, h.col, len(h.text), True).certain
        for h in hits
    )


def _heuristic(match: RawMatch, *, exact: bool, reason: str | None) -> Classification:
    if match.line_text.startswith("…"):  # a clipped long line: its columns do not line up
        return Classification(
            category="text_match", confidence=0.3, tier="heuristic", reason=reason
        )
    g = guess(match.language, match.line_text, match.col, len(match.text), exact)
    return Classification(
        category=g.category, confidence=g.confidence, tier="heuristic", reason=reason
    )
