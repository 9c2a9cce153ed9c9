"""Classify all hits of a search, file by file as the corpus reads them.

Files come in chunks of ``CHUNK_BYTES``: each chunk is looked up in the cache (records by
content hash, or sliced records by hash and hit spans), its cached files are classified at
once, and the rest go to the ``Analyzer`` (in-process or the pool), whose results are
classified as they arrive. A file's records are dropped, and its bytes released to the
corpus, as soon as its hits have their classification, so an audit-size search never holds
all records or all sources at once. Files with the same content are parsed once.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator

import msgspec

from cq.cache.payloads import PayloadCache
from cq.cancel import Check, never
from cq.classify.analyze import FileAnalysis, FileTask, SlicedRecords, node_verdicts
from cq.classify.heuristic import guess, python_lexer_is_exact
from cq.classify.lookup import classify_from_records
from cq.classify.pool import Analyzer, kill_workers, search_done
from cq.classify.records import FileRecords, StoredRecords
from cq.classify.sliced import Pieces, hits_key
from cq.classify.verdicts import BUILDERS as VERDICT_BUILDERS
from cq.classify.verdicts import FileVerdicts, verdicts_key
from cq.errors import SearchCancelledError
from cq.model import Classification, Language, RawMatch, RunCounters
from cq.model.tuning import Tuning
from cq.parse import Corpus, SourceFile

_FLUSH_BYTES = 8 * 1024 * 1024  # fresh cache entries written in one transaction (not tuned)
# What shapes records: the worker's code and everything it imports (``cq.cache.payloads``).
_BUILDERS = ("cq.classify.analyze",)


class _File(msgspec.Struct, frozen=True):
    """A file to classify: its digest (recalled or read), size, and bytes if read already."""

    rel: str
    language: Language
    digest: str
    size: int
    source: SourceFile | None = None


class ClassifyOutcome(msgspec.Struct, frozen=True):
    classifications: list[Classification]
    counters: RunCounters  # volatile: cache hits/misses, files parsed, pool workers
    reasons: dict[str, int]  # stable: why hits stayed text_match / fell to the heuristic


def classify_all(
    corpus: Corpus,
    matches: tuple[RawMatch, ...],
    *,
    tuning: Tuning | None = None,
    use_cache: bool = True,
    check: Check = never,
) -> ClassifyOutcome:
    """One classification per match, same order (``check`` may raise to cancel).

    Files with cached records are not read past their hash. Of the others, a Python file
    whose hits sit in a small part of it is parsed as slices (``slices.py``, cached per file
    and hit spans); the rest are parsed whole.
    """
    tuning = tuning or Tuning()
    run = _Run(corpus, matches, tuning, use_cache, check)
    try:
        run.classify()
        search_done()
    except SearchCancelledError:
        run.analyzer.cancel()
        raise
    except BaseException as exc:
        if not isinstance(exc, Exception):  # ^C or exit: running batches are not waited for
            kill_workers()
        raise
    counters = run.counters
    if run.analyzer.workers and counters["pool_failures"] == 0:
        counters["pool_workers"] = run.analyzer.workers
    counters["pool_failures"] += run.analyzer.failures
    counters["helper_files"] += run.analyzer.helped
    counters["cache_corrupt"] += run.corrupt()
    return ClassifyOutcome(
        classifications=[c or Classification() for c in run.out],
        counters=RunCounters(**{k: v for k, v in counters.items() if v}),
        reasons=dict(sorted(run.reasons.items())),
    )


class _Run:
    """One search's classification: the matches by file, the verdicts so far, the work."""

    def __init__(
        self,
        corpus: Corpus,
        matches: tuple[RawMatch, ...],
        tuning: Tuning,
        use_cache: bool,
        check: Check,
    ) -> None:
        self.corpus, self.matches, self.check = corpus, matches, check
        self.t, self.caps, self.scale = tuning.classify, tuning.parse, tuning.scale
        caps = self.caps
        self.by_file: dict[str, list[int]] = defaultdict(list)
        for i, match in enumerate(matches):
            self.by_file[match.file].append(i)
        self.out: list[Classification | None] = [None] * len(matches)
        self.counters: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()
        self.analyzer = Analyzer(caps, self.scale, check)
        self.records = {
            lang: PayloadCache(
                f"records-{lang}", StoredRecords, _BUILDERS, enabled=use_cache, settings=caps
            )
            for lang in ("python", "rust")
        }
        self.sliced = PayloadCache(
            "records-sliced", SlicedRecords, _BUILDERS, enabled=use_cache, settings=caps
        )
        self.verdicts = PayloadCache(
            "verdicts", FileVerdicts, VERDICT_BUILDERS, enabled=use_cache, settings=tuning
        )
        self.waiting: dict[str, list[str]] = {}  # task key -> files waiting for its analysis
        self.task_keys: dict[str, str] = {}  # the file a task was made from -> its key
        self.verdict_keys: dict[str, tuple[str, str]] = {}  # file -> digest, verdicts' key

    def classify(self) -> None:
        chunk: list[_File] = []
        size = seen = 0
        files = list(self.by_file)
        known = self.corpus.recall(files)  # unchanged files: their digest, no read
        for count, rel in enumerate(files, 1):
            self.check()
            language = self.matches[self.by_file[rel][0]].language
            if rel in known:
                item = _File(rel, language, known[rel].digest, known[rel].size)
            else:
                item = self._read(rel, language)
                if item is None:
                    continue
            chunk.append(item)
            size += item.size
            seen += item.size
            if size >= self.scale.chunk_bytes:
                expected = seen // count * (len(files) - count)
                self._done(self.analyzer.feed(self._chunk(chunk), expected))
                chunk, size = [], 0
        if chunk:
            self._done(self.analyzer.feed(self._chunk(chunk), 0))
        self._done(self.analyzer.drain())
        self.flush()

    def _read(self, rel: str, language: Language) -> _File | None:
        """The file read now (None: unreadable, or changed since its digest was taken; its
        hits get the heuristic)."""
        source = self.corpus.source(rel, language)
        if source is None:
            ids = self.by_file[rel]
            self.reasons["unreadable file"] += len(ids)
            for i in ids:
                self.out[i] = self._heuristic(i, exact=False, reason="unreadable file")
            return None
        return _File(rel, language, source.digest, len(source.data), source)

    def _chunk(self, chunk: list[_File]) -> list[FileTask]:
        """Classify what the cache answers (verdicts, else records); the tasks that parse the
        rest."""
        chunk = self._cached_verdicts(chunk)
        records = self._cached_records(chunk)
        self.counters["cache_hits"] += len(records)
        self.counters["cache_misses"] += len(chunk) - len(records)
        for item in chunk:
            if item.rel in records:
                self._apply(item.rel, item.language, records[item.rel])
        spans = {
            item.rel: [
                (self.matches[i].byte_start, self.matches[i].byte_end)
                for i in self.by_file[item.rel]
            ]
            for item in chunk
            if item.rel not in records and item.language == "python"
        }
        digests = {item.rel: item.digest for item in chunk}
        keys = {rel: hits_key(digests[rel], hits) for rel, hits in spans.items()}
        sliced = self._cached_sliced(keys)
        tasks: list[FileTask] = []
        for item in chunk:
            if item.rel in records:
                continue
            if item.rel in sliced:
                self._apply_pieces(item.rel, sliced[item.rel])
                continue
            source = item.source
            if source is None:  # recalled, and to be parsed: read (and hashed) now
                read = self._read(item.rel, item.language)
                if read is None:
                    continue
                source = read.source
            rel = item.rel
            if self._all_certain(source, self.by_file[rel]):
                self.counters["files_skipped_by_heuristic"] += 1
                for i in self.by_file[rel]:
                    self.out[i] = self._heuristic(i, exact=True, reason=None)
                self._keep_verdicts(rel, item.language, Counter())
                self.corpus.release(rel)
            else:
                key = keys.get(rel, source.digest)
                if key in self.waiting:  # the same content and hits: parsed once
                    self.waiting[key].append(rel)
                    continue
                self.waiting[key] = [rel]
                self.task_keys[rel] = key
                tasks.append(FileTask(rel, source.language, source.data, spans.get(rel, [])))
        self.counters["files_sliced"] += len(sliced)
        return tasks

    def _done(self, finished: Iterator[tuple[FileTask, FileAnalysis]]) -> None:
        for task, analysis in finished:
            key = self.task_keys.pop(task.rel)
            rels = self.waiting.pop(key)
            self.counters["slices_parsed"] += analysis.slices_parsed
            self.counters["slices_failed"] += analysis.slices_failed
            self.counters["bytes_parsed"] += analysis.bytes_parsed
            if analysis.sliced is not None:
                self.counters["files_sliced"] += len(rels)
                self._keep(self.sliced, key, analysis.sliced)
                pieces = Pieces(analysis.sliced)
                for rel in rels:
                    self._apply_pieces(rel, pieces)
                continue
            self.counters["files_parsed"] += 1
            stored: StoredRecords = analysis.records  # type: ignore[assignment]
            digest = self.corpus.digest(task.rel)
            self._keep(self.records[task.language], digest, stored)  # type: ignore[arg-type]
            records = FileRecords.from_stored(stored)
            for rel in rels:
                self._apply(rel, task.language, records)

    def _apply(self, rel: str, language: Language, records: FileRecords) -> None:
        """Classify a file's hits from its records."""
        self._verdicts(rel, language, records, [0] * len(self.by_file[rel]))

    def _apply_pieces(self, rel: str, pieces: Pieces) -> None:
        """Classify a file's hits from its slices' records, each hit shifted to its slice."""
        self._verdicts(rel, "python", pieces.records, pieces.shifts)

    def _verdicts(
        self, rel: str, language: Language, records: FileRecords, shifts: list[int]
    ) -> None:
        """Each hit's verdict from the records (``shifts``: what each hit's offsets lose to
        land in them), the node tier for what they leave open (the one step that needs the
        file's bytes); then the bytes go back to the corpus."""
        ids = self.by_file[rel]
        why: Counter[str] = Counter()
        for i, shift in zip(ids, shifts, strict=True):
            self.out[i] = self._classify(i, records, shift, why)
        self.reasons.update(why)
        open_ids = [i for i in ids if self.out[i] is None]
        source = self.corpus.source(rel, language) if open_ids else None
        if open_ids:
            spans = [(self.matches[i].byte_start, self.matches[i].byte_end) for i in open_ids]
            verdicts = None
            if source is not None:  # None: changed since its records were chosen
                self.counters["node_tier_files"] += 1
                task = FileTask(rel, source.language, source.data)
                verdicts = node_verdicts(task, spans, self.caps, self.t)
            for n, i in enumerate(open_ids):  # none when the whole file does not parse
                self.out[i] = verdicts[n] if verdicts else self._heuristic(i, False, None)
        if not open_ids or source is not None:
            self._keep_verdicts(rel, language, why)
        self.corpus.release(rel)

    def _spans(self, rel: str) -> list[tuple[int, int]]:
        return [(self.matches[i].byte_start, self.matches[i].byte_end) for i in self.by_file[rel]]

    def _keep_verdicts(self, rel: str, language: Language, why: Counter[str]) -> None:
        """Cache the file's finished classifications (``why``: its hits' fallback reasons)."""
        digest = self.corpus.digest(rel)
        if digest is not None:
            done = [c for c in (self.out[i] for i in self.by_file[rel]) if c is not None]
            known = self.verdict_keys.pop(rel, None)
            key = known[1] if known and known[0] == digest else None
            if key is None:
                key = verdicts_key(language, digest, self._spans(rel))
            self._keep(self.verdicts, key, FileVerdicts(done, dict(why)))

    def _cached_verdicts(self, chunk: list[_File]) -> list[_File]:
        """Set the hits of files whose verdicts are cached; the other files."""
        keys = {
            item.rel: verdicts_key(item.language, item.digest, self._spans(item.rel))
            for item in chunk
        }
        found = self.verdicts.get_many(set(keys.values()))
        rest: list[_File] = []
        for item in chunk:
            cached = found.get(keys[item.rel])
            ids = self.by_file[item.rel]
            if cached is None or len(cached.classifications) != len(ids):
                self.verdict_keys[item.rel] = (item.digest, keys[item.rel])  # to store them
                rest.append(item)
                continue
            for i, verdict in zip(ids, cached.classifications, strict=True):
                self.out[i] = verdict
            if cached.reasons:
                self.reasons.update(cached.reasons)
            self.corpus.release(item.rel)
        self.counters["cache_hits"] += len(chunk) - len(rest)
        self.counters["verdict_cache_hits"] += len(chunk) - len(rest)
        return rest

    def _cached_records(self, chunk: list[_File]) -> dict[str, FileRecords]:
        found: dict[str, FileRecords] = {}
        for language, cache in self.records.items():
            wanted: dict[str, list[str]] = defaultdict(list)
            for item in chunk:
                if item.language == language:
                    wanted[item.digest].append(item.rel)
            for digest, stored in cache.get_many(wanted).items():
                found.update(dict.fromkeys(wanted[digest], FileRecords.from_stored(stored)))
        return found

    def _cached_sliced(self, keys: dict[str, str]) -> dict[str, Pieces]:
        """Sliced records a search with the same hits in the same files stored."""
        wanted: dict[str, list[str]] = defaultdict(list)
        for rel, key in keys.items():
            wanted[key].append(rel)
        found: dict[str, Pieces] = {}
        for key, stored in self.sliced.get_many(wanted).items():
            found.update(dict.fromkeys(wanted[key], Pieces(stored)))
        self.counters["slice_cache_hits"] += len(found)
        return found

    def _keep(
        self, cache: PayloadCache, key: str, payload: StoredRecords | SlicedRecords | FileVerdicts
    ) -> None:
        """Queue a fresh entry for the cache (written in batches)."""
        cache.add(key, payload)
        if sum(c.pending_bytes for c in self._caches()) >= _FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        for cache in self._caches():
            cache.flush()

    def corrupt(self) -> int:
        return sum(c.corrupt for c in self._caches())

    def _caches(self) -> list[PayloadCache]:
        return [*self.records.values(), self.sliced, self.verdicts]

    def _classify(
        self, i: int, rec: FileRecords, shift: int, why: Counter[str]
    ) -> Classification | None:
        match = self.matches[i]
        if not match.text:  # an empty regex match (``^``, ``x*``) is a position, not a construct
            return Classification(
                category="text_match", confidence=self.t.empty_match, tier="fallback"
            )
        if rec.reason is not None:
            why[rec.reason] += 1
            return self._heuristic(i, exact=False, reason=rec.reason)
        start, end = match.byte_start - shift, match.byte_end - shift
        return classify_from_records(rec, start, end, match.text, self.t)

    def _heuristic(self, i: int, exact: bool, reason: str | None) -> Classification:
        match = self.matches[i]
        if _shortened(match):  # a window of a long line: the lexer cannot see its start
            return Classification(
                category="text_match",
                confidence=self.t.clipped_line,
                tier="heuristic",
                reason=reason,
            )
        g = guess(match.language, match.line_text, match.col, len(match.text), exact, self.t)
        return Classification(
            category=g.category, confidence=g.confidence, tier="heuristic", reason=reason
        )

    def _all_certain(self, source: SourceFile, ids: list[int]) -> bool:
        """Tier 1 decides every hit of this file: no parse needed."""
        if source.language != "python" or not python_lexer_is_exact(source.data):
            return False
        return all(
            not _shortened(h)
            and guess("python", h.line_text, h.col, len(h.text), True, self.t).certain
            for h in (self.matches[i] for i in ids)
        )


def _shortened(match: RawMatch) -> bool:
    return match.line_window is not msgspec.UNSET
