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
from cq.classify.sliced import Pieces, SlicedRecords, assemble, hits_key, slice_tasks
from cq.classify.slices import SlicePlan
from cq.model import Classification, RawMatch
from cq.parse import SourceFile, load_source

RECORDS_VERSION = 3


class ClassifyOutcome(msgspec.Struct, frozen=True):
    classifications: list[Classification]
    counters: dict[str, int]  # volatile: cache hits/misses, files parsed, pool workers
    reasons: dict[str, int]  # stable: why hits stayed text_match / fell to the heuristic


def classify_all(
    root: Path,
    matches: tuple[RawMatch, ...],
    *,
    use_cache: bool = True,
    check: Check = never,
) -> ClassifyOutcome:
    """One classification per match, same order (``check`` may raise to cancel).

    Files with cached records are not read past their hash. Of the others, a Python file
    whose hits sit in a small part of it is parsed as slices (``slices.py``, cached per file
    and hit spans by ``sliced.py``); the rest are parsed whole, all in one pool round.
    """
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

    spans = {
        rel: [(matches[i].byte_start, matches[i].byte_end) for i in by_file[rel]]
        for rel in todo
        if sources[rel].language == "python"  # type: ignore[union-attr]
    }
    keys = {rel: hits_key(sources[rel].digest, s) for rel, s in spans.items()}  # type: ignore[union-attr]
    sliced = _cached_sliced(keys, use_cache, counters)
    fresh, fresh_sliced = _parse(
        root, [rel for rel in todo if rel not in sliced], spans, sources, counters, check
    )
    if use_cache:
        _store_fresh(fresh, {keys[rel]: s for rel, s in fresh_sliced.items()}, sources)
    records.update({rel: FileRecords.from_stored(r) for rel, r in fresh.items()})
    sliced.update({rel: Pieces(s) for rel, s in fresh_sliced.items()})
    counters["files_sliced"] += len(sliced)

    for rel, ids in by_file.items():
        if rel in records:
            rec = records[rel]
            for i in ids:
                out[i] = _classify(matches[i], rec, reasons)
        elif rel in sliced:
            pieces = sliced[rel]
            for i, owner in zip(ids, pieces.owners, strict=True):
                out[i] = _classify(matches[i], pieces.records[owner], reasons)
    _resolve_open_hits(root, matches, by_file, sources, out, counters)
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


def _cached_sliced(
    keys: dict[str, str], use_cache: bool, counters: Counter[str]
) -> dict[str, Pieces]:
    """Sliced records a search with the same hits in the same files stored."""
    if not use_cache or not keys:
        return {}
    from cq.cache import open_store

    store = open_store()
    namespace = _namespace("python")
    decoder = msgspec.msgpack.Decoder(SlicedRecords)
    wanted = {key: rel for rel, key in keys.items()}
    found: dict[str, Pieces] = {}
    for key, blob in store.get_many(namespace, wanted).items():
        try:
            found[wanted[key]] = Pieces(decoder.decode(blob))
        except (msgspec.DecodeError, msgspec.ValidationError):
            store.delete(namespace, key)  # corrupt entry: rebuild it
            counters["cache_corrupt"] += 1
    counters["slice_cache_hits"] += len(found)
    return found


def _store_fresh(
    fresh: dict[str, StoredRecords],
    fresh_sliced: dict[str, SlicedRecords],
    sources: dict[str, SourceFile | None],
) -> None:
    """Whole-file records under the file's hash, sliced ones under their ``hits_key``."""
    from cq.cache import open_store

    encoder = msgspec.msgpack.Encoder()
    store = open_store()
    for language in ("python", "rust"):
        blobs = {
            sources[rel].digest: encoder.encode(r)  # type: ignore[union-attr]
            for rel, r in fresh.items()
            if r.language == language
        }
        if language == "python":
            blobs.update({key: encoder.encode(s) for key, s in fresh_sliced.items()})
        if blobs:
            store.put_many(_namespace(language), blobs)


def _parse(
    root: Path,
    todo: list[str],
    spans: dict[str, list[tuple[int, int]]],
    sources: dict[str, SourceFile | None],
    counters: Counter[str],
    check: Check,
) -> tuple[dict[str, StoredRecords], dict[str, SlicedRecords]]:
    """Records of the ``todo`` files: sliced where ``spans`` allow a plan, else whole, in
    one round of parsing; a file whose slice did not parse is parsed whole after it."""
    plans = _slice_plans({rel: spans[rel] for rel in todo if rel in spans}, sources)
    whole = [rel for rel in todo if rel not in plans]
    tasks = slice_tasks(root, plans) + _whole_tasks(root, whole, sources)
    analyses = _analyze(tasks, sources, counters, check)
    cut = len(analyses) - len(whole)
    sliced = assemble(plans, analyses[:cut])
    fresh = {rel: a.records for rel, a in zip(whole, analyses[cut:], strict=True)}
    retry = [rel for rel in plans if rel not in sliced]
    counters["slices_failed"] += len(retry)
    again = _analyze(_whole_tasks(root, retry, sources), sources, counters, check)
    fresh.update({rel: a.records for rel, a in zip(retry, again, strict=True)})
    return fresh, sliced


def _slice_plans(
    spans: dict[str, list[tuple[int, int]]], sources: dict[str, SourceFile | None]
) -> dict[str, SlicePlan]:
    """The files worth parsing as slices, with their slices."""
    from cq.classify.slices import python_slices

    plans: dict[str, SlicePlan] = {}
    for rel, hits in spans.items():
        plan = python_slices(sources[rel].data, hits)  # type: ignore[union-attr]
        if plan is not None:
            plans[rel] = plan
    return plans


def _whole_tasks(
    root: Path, todo: list[str], sources: dict[str, SourceFile | None]
) -> list[FileTask]:
    return [FileTask(str(root / rel), rel, sources[rel].language) for rel in todo]  # type: ignore[union-attr]


def _analyze(
    tasks: list[FileTask],
    sources: dict[str, SourceFile | None],
    counters: Counter[str],
    check: Check,
) -> list[FileAnalysis]:
    """Each task's analysis, in order (a pool when the bytes justify one)."""
    if not tasks:
        return []
    from cq.classify.pool import analyze_all

    sizes = [
        t.slice.end - t.slice.start if t.slice else len(sources[t.rel].data)  # type: ignore[union-attr]
        for t in tasks
    ]
    extra: dict[str, int] = {}
    analyses = analyze_all(tasks, sizes, extra, check)
    for key, value in extra.items():  # a retry round may use the pool again
        counters[key] = (
            max(counters[key], value) if key == "pool_workers" else counters[key] + value
        )
    counters["slices_parsed"] += sum(1 for t in tasks if t.slice is not None)
    counters["files_parsed"] += sum(1 for t in tasks if t.slice is None)
    return analyses


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
        task = FileTask(str(root / rel), rel, matches[ids[0]].language, spans)
        analysis = analyze_file(task, source.data if source else None)
        counters["node_tier_files"] += 1
        for i, verdict in zip(open_ids, analysis.node_verdicts, strict=True):
            out[i] = verdict


def _all_certain(source: SourceFile, hits: list[RawMatch]) -> bool:
    """Tier 1 decides every hit of this file: no parse needed."""
    if source.language != "python" or not python_lexer_is_exact(source.data):
        return False
    return all(
        not _shortened(h) and guess("python", h.line_text, h.col, len(h.text), True).certain
        for h in hits
    )


def _heuristic(match: RawMatch, *, exact: bool, reason: str | None) -> Classification:
    if _shortened(match):  # a window of a long line: the lexer cannot see its start
        return Classification(
            category="text_match", confidence=0.3, tier="heuristic", reason=reason
        )
    g = guess(match.language, match.line_text, match.col, len(match.text), exact)
    return Classification(
        category=g.category, confidence=g.confidence, tier="heuristic", reason=reason
    )


def _shortened(match: RawMatch) -> bool:
    return match.line_window is not msgspec.UNSET
