"""The shown files' enrichment shared with a helper (``Share``): a forked child that takes
turns with this process at the files (``cq.forked.Turns``), or in a long-lived process a
worker of its pool (``Pooled``). ``cq.enrich.computed`` computes every hit; this module only
decides who computes which, and gathers what the helper sends back. Imported by a cold
search's enrichment only (a warm search's hits are in the store).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import msgspec

from cq import forked
from cq.cancel import Check
from cq.classify import helper_pool
from cq.enrich.bindings import Bindings, compile_tables
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
from cq.model import Finding
from cq.parse import SourceFile

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor


class Shared(msgspec.Struct, frozen=True, array_like=True):
    """What the helper sends back: its hits, and its files' symbol tables by digest."""

    hits: list[Computed]
    symbols: dict[str, dict[str, dict[str, int]]]


class Share:
    """The hits and symbol tables of the shown files, computed with a helper while this
    process computes its part: a cold search's enrichment is three parses of each shown file
    (ast-grep, tree-sitter, symtable) holding the interpreter lock, ~0.3 CPU-s for
    'register' on the stdlib (``cq search register -v`` with no helper: enrich 0.24-0.32 s,
    bench/results/2026-11-30-speed12), and LibCST for some hits. Every hit's enrichment is a pure
    function of its file, position and settings, so who computes it changes nothing, as
    long as no hit's settings depend on the hits before it: not with a wall-time budget,
    nor with a LibCST hit quota that only some of the hits reach.

    A process that may fork takes turns with a forked child at the files, the largest first
    (``cq.forked.Turns``: a file's cost depends on its hits' stages, LibCST's above all, which
    no split decided in advance can weigh); a long-lived process hands its pool's worker the
    second side of a split by size (``Pooled``)."""

    def __init__(
        self,
        helper: Helper | forked.Turns,
        hits: dict[int, str],
        digests: set[str],
        work: Callable[[list[str]], Shared],
        paths: list[str],
    ) -> None:
        self.helper, self.hits, self.digests, self.work = helper, hits, digests, work
        self.paths = paths  # the files the helper takes turns at, or those of its side

    @classmethod
    def start(
        cls,
        shown: list[Finding],
        files: ShownFiles,
        store: EnrichmentStore,
        bindings: Bindings,
        settings: EnrichSettings,
    ) -> Share | None:
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
            key = store_key(shown[index], files, settings)
            if source is not None and key is not None:
                key += QUOTA_SUFFIX if limit == QUOTA else ""
                if store.get(key) is None:
                    todo[index] = (source.path, key)
                    sizes[source.path] = len(source.data)
        tables = {d: bindings.sources[rel] for d, rel in bindings.missing().items()}
        sizes |= {s.path: len(s.data) for s in tables.values() if s is not None}
        if len(sizes) < 2 or sum(sizes.values()) < t.helper_min_bytes:
            return None

        def work(paths: list[str]) -> Shared:
            """The hits and tables of ``paths``' files (here or in the helper)."""
            wanted = set(paths)
            computed = [
                compute_hit(i, shown[i], key, files, settings, limit)
                for i, (path, key) in todo.items()
                if path in wanted
            ]
            digests = sorted(d for d, s in tables.items() if s is not None and s.path in wanted)
            return Shared(computed, bindings.compile(digests))

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
        theirs = split_by_size(sizes)
        hits = {i: key for i, (path, key) in todo.items() if path in theirs}
        tabled = sorted(d for d, s in tables.items() if s is not None and s.path in theirs)
        todo_items = [(i, shown[i], k) for i, k in hits.items()]
        given = {f.file: s for f in (shown[i] for i in hits) if (s := files.source(f))}
        started = Pooled.submit(pooled, todo_items, given, bindings.files(tabled), settings, limit)
        return None if started is None else cls(started, hits, set(tabled), work, sorted(theirs))

    def finish(self, check: Check) -> tuple[Shared, int]:
        """Every share hit and table (those the helper computed, and with a forked helper
        this process's turns, taken now), and how many hits the helper computed; what a
        failed helper left is computed here (the same values)."""
        if isinstance(self.helper, forked.Turns):
            return self._take_turns(self.helper, check)
        blob = self.helper.result()
        if blob is not None:
            with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
                shared = msgspec.msgpack.decode(blob, type=Shared)
                return shared, len(shared.hits)
        return self.work(self.paths), 0

    def _take_turns(self, turns: forked.Turns, check: Check) -> tuple[Shared, int]:
        hits: list[Computed] = []
        symbols: dict[str, dict[str, dict[str, int]]] = {}
        done: set[str] = set()
        while (k := turns.take()) is not None:
            check()
            mine = self.work([self.paths[k]])
            hits += mine.hits
            symbols |= mine.symbols
            done.add(self.paths[k])
        theirs: list[Shared] | None = None
        with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
            blobs = turns.finish()
            if blobs is not None:
                theirs = [msgspec.msgpack.decode(b, type=Shared) for b in blobs.values()]
        helped = 0
        for shared in theirs or ():
            hits += shared.hits
            symbols |= shared.symbols
            helped += len(shared.hits)
        if theirs is None:  # the helper failed: its files are this process's
            rest = self.work([p for p in self.paths if p not in done])
            hits += rest.hits
            symbols |= rest.symbols
        return Shared(sorted(hits, key=lambda h: h.index), symbols), helped

    def abandon(self) -> None:
        if isinstance(self.helper, forked.Turns):
            self.helper.abandon()
        else:
            self.helper.kill()


class Helper(Protocol):
    """A helper computing a share: a forked child, or a pool worker's task."""

    def result(self) -> bytes | None: ...

    def kill(self) -> None: ...


class Pooled:
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
    ) -> Pooled | None:
        try:
            return cls(pool.submit(pooled_share, hits, given, tables, settings, limit))
        except Exception:  # a pool that is shut down or broken: this process does it all
            return None

    def result(self) -> bytes | None:
        try:
            return self.future.result()
        except Exception:  # a worker that died: the caller computes the share itself
            return None

    def kill(self) -> None:
        self.future.cancel()


def pooled_share(
    hits: list[tuple[int, Finding, str]],
    given: dict[str, SourceFile],
    tables: list[tuple[str, SourceFile]],
    settings: EnrichSettings,
    limit: str | None,
) -> bytes:
    """In a pool worker: the share's hits enriched and its tables compiled, encoded."""
    files = ShownFiles(lambda rel, _language: given.get(rel))
    computed = [compute_hit(i, finding, key, files, settings, limit) for i, finding, key in hits]
    return msgspec.msgpack.encode(Shared(computed, compile_tables(tables)))


def split_by_size(sizes: dict[str, int]) -> set[str]:
    """The files of the helper's side: the largest first, each to the lighter side."""
    sides: tuple[list[str], list[str]] = ([], [])
    loads = [0, 0]
    for path in sorted(sizes, key=lambda p: (-sizes[p], p)):
        side = 0 if loads[0] <= loads[1] else 1
        sides[side].append(path)
        loads[side] += sizes[path]
    return set(sides[1])
