"""The shown files' enrichment shared with a helper (``Share``): the enrichment's standby
(``cq.enrich.standby``: forked at the search's start, it has LibCST imported) computing it
all, a forked child that takes turns with this process at the files (``cq.forked.Turns``),
or in a long-lived process a worker of its pool (``Pooled``). ``cq.enrich.computed`` computes
every hit; this module only decides who computes which, and gathers what the helper sends
back. Imported by a cold search's enrichment only (a warm search's hits are in the store).
"""

from __future__ import annotations

import contextlib
import pickle
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import msgspec

from cq import forked
from cq.cancel import Check, never
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
from cq.enrich.python import may_resolve
from cq.enrich.stages import QUOTA
from cq.enrich.store import EnrichmentStore
from cq.model import Finding
from cq.parse import SourceFile

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from cq.prefork import Standby


class Shared(msgspec.Struct, frozen=True, array_like=True):
    """What the helper sends back: its hits, and its files' symbol tables by digest."""

    hits: list[Computed]
    symbols: dict[str, dict[str, dict[str, int]]]


class ShareRequest(msgspec.Struct, frozen=True):
    """Hits to compute and files' symbol tables to compile, with all that computing them
    reads: the pool's worker and the standby have none of this search's state (sent
    pickled: ``SourceFile`` is no struct)."""

    hits: list[tuple[int, Finding, str]]  # index among the shown, the finding, its store key
    given: dict[str, SourceFile]  # the hits' files by path
    tables: list[tuple[str, SourceFile]]  # (digest, file) of the tables to compile
    settings: EnrichSettings
    limit: str | None  # LibCST's limit, the same for every hit

    def sizes(self) -> dict[str, int]:
        """The files to read, by path: their bytes."""
        files = [*self.given.values(), *(s for _, s in self.tables)]
        return {s.path: len(s.data) for s in files}

    def work(self, paths: list[str]) -> Shared:
        """The hits and tables of ``paths``' files (here or in a helper)."""
        wanted = set(paths)
        files = ShownFiles(lambda rel, _language: self.given.get(rel))
        computed = [
            compute_hit(i, finding, key, files, self.settings, self.limit)
            for i, finding, key in self.hits
            if finding.file in wanted
        ]
        tables = [(d, s) for d, s in self.tables if s.path in wanted]
        return Shared(computed, compile_tables(tables))


class Share:
    """The hits and symbol tables of the shown files, computed with a helper while this
    process computes its part: a cold search's enrichment is three parses of each shown file
    (ast-grep, tree-sitter, symtable) holding the interpreter lock, ~0.3 CPU-s for
    'register' on the stdlib (``cq search register -v`` with no helper: enrich 0.24-0.32 s,
    bench/results/2026-11-30-speed12), and LibCST for some hits. Every hit's enrichment is a pure
    function of its file, position and settings, so who computes it changes nothing, as
    long as no hit's settings depend on the hits before it: not with a wall-time budget,
    nor with a LibCST hit quota that only some of the hits reach.

    The enrichment's standby, when the search has one and a hit may need LibCST, computes
    every hit (taking turns with its own helper): this process has not imported LibCST, and
    would pay its import before its first such hit. Otherwise a process that may fork takes
    turns with a forked child at the files, the largest first (``cq.forked.Turns``: a file's
    cost depends on its hits' stages, LibCST's above all, which no split decided in advance
    can weigh); a long-lived process hands its pool's worker the second side of a split by
    size (``Pooled``)."""

    def __init__(
        self,
        helper: Helper | forked.Turns,
        request: ShareRequest,
        paths: list[str],
        *,
        by_standby: bool = False,
    ) -> None:
        self.helper = helper
        self.paths = paths  # the files taken in turns, or those of the helper's side
        self.hits = {i: key for i, _, key in request.hits}  # the helper's, booked by finish
        self.digests = {d for d, _ in request.tables}
        self.work = request.work
        self.by_standby = by_standby  # the enrichment's standby computes it all

    @classmethod
    def start(
        cls,
        shown: list[Finding],
        files: ShownFiles,
        store: EnrichmentStore,
        bindings: Bindings,
        settings: EnrichSettings,
        standing: Callable[[bool, int], Standby | None],
    ) -> Share | None:
        """The share started, or None: this process computes every hit. ``standing(wanted,
        wait_ms)`` gives the enrichment's standby (``cq.enrich.standby.take``) if ``wanted``
        and ready within ``wait_ms``, else dismisses it."""
        t = settings.tuning
        count = min(len(shown), t.max_hits)
        if t.budget_ms is not None or 0 < t.libcst_hits < count:
            standing(False, 0)
            return None
        limit = QUOTA if t.libcst_hits == 0 else None  # the same for every hit
        todo: dict[int, tuple[str, str]] = {}  # hit -> its file, its store key
        given: dict[str, SourceFile] = {}
        for index in range(count):
            source = files.source(shown[index])
            key = store_key(shown[index], files, settings)
            if source is not None and key is not None:
                key += QUOTA_SUFFIX if limit == QUOTA else ""
                if store.get(key) is None:
                    todo[index] = (source.path, key)
                    given[source.path] = source
        tables = [
            (d, s)
            for d, rel in sorted(bindings.missing().items())
            if (s := bindings.sources[rel]) is not None
        ]

        def request(paths: set[str]) -> ShareRequest:
            """The hits and tables of ``paths``' files."""
            return ShareRequest(
                [(i, shown[i], key) for i, (path, key) in todo.items() if path in paths],
                {path: source for path, source in given.items() if path in paths},
                [(d, s) for d, s in tables if s.path in paths],
                settings,
                limit,
            )

        everything = request(set(given) | {s.path for _, s in tables})
        sizes = everything.sizes()
        wanted = any(_may_resolve(shown[i], files) for i in todo)
        waiting = standing(wanted, t.standby_wait_ms)
        if waiting is not None and sizes:  # it has LibCST imported: it computes them all
            asked = waiting.ask(pickle.dumps(everything, protocol=pickle.HIGHEST_PROTOCOL))
            if asked is not None:
                return cls(asked, everything, sorted(sizes), by_standby=True)
        if len(sizes) < 2 or sum(sizes.values()) < t.helper_min_bytes:
            return None
        # a process that may fork forks a helper; a long-lived one hands its pool the share
        if forked.possible():
            turns = take_turns(everything)
            return None if turns is None else cls(turns[0], everything, turns[1])
        pooled = helper_pool()
        if pooled is None:
            return None
        theirs = request(split_by_size(sizes))
        started = Pooled.submit(pooled, theirs)
        return None if started is None else cls(started, theirs, sorted(theirs.sizes()))

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


def _may_resolve(finding: Finding, files: ShownFiles) -> bool:
    """``may_resolve`` of a hit whose file is readable (its line read for a call alone)."""
    if finding.category != "callsite":
        return may_resolve(finding, b"", b"")
    source = files.source(finding)
    assert source is not None
    span = files.span(source, finding)
    line_start = source.data.rfind(b"\n", 0, span.byte_start) + 1
    return may_resolve(finding, source.data[line_start : span.byte_start], source.data)


def take_turns(request: ShareRequest) -> tuple[forked.Turns, list[str]] | None:
    """A forked child started on ``request``'s files, the largest first, taking turns with
    this process (``Share._take_turns``); None when it could not be forked."""
    sizes = request.sizes()
    order = sorted(sizes, key=lambda p: (-sizes[p], p))
    turns = forked.Turns.start(
        len(order), lambda k: msgspec.msgpack.encode(request.work([order[k]]))
    )
    return None if turns is None else (turns, order)


def serve_request(blob: bytes) -> bytes:
    """In the standby: a pickled ``ShareRequest`` computed, by turns with a child forked
    here (it inherits LibCST), encoded as ``Shared``."""
    request: ShareRequest = pickle.loads(blob)
    paths = sorted(request.sizes())
    turns = take_turns(request) if len(paths) > 1 else None
    if turns is None:
        shared = request.work(paths)
    else:
        shared, _ = Share(turns[0], request, turns[1]).finish(never)
    return msgspec.msgpack.encode(shared)


class Helper(Protocol):
    """A helper computing a share: the standby, a forked child, or a pool worker's task."""

    def result(self) -> bytes | None: ...

    def kill(self) -> None: ...


class Pooled:
    """A share run by a worker of the long-lived process's pool (``cq.classify.pool``,
    forked by its fork server): the request carries the hits, their files and the symbol
    tables' files, as the worker has none of this search's state."""

    def __init__(self, future: Future[bytes]) -> None:
        self.future = future

    @classmethod
    def submit(cls, pool: ProcessPoolExecutor, request: ShareRequest) -> Pooled | None:
        try:
            return cls(pool.submit(pooled_share, request))
        except Exception:  # a pool that is shut down or broken: this process does it all
            return None

    def result(self) -> bytes | None:
        try:
            return self.future.result()
        except Exception:  # a worker that died: the caller computes the share itself
            return None

    def kill(self) -> None:
        self.future.cancel()


def pooled_share(request: ShareRequest) -> bytes:
    """In a pool worker: the request's hits enriched and its tables compiled, encoded."""
    return msgspec.msgpack.encode(request.work(sorted(request.sizes())))


def split_by_size(sizes: dict[str, int]) -> set[str]:
    """The files of the helper's side: the largest first, each to the lighter side."""
    sides: tuple[list[str], list[str]] = ([], [])
    loads = [0, 0]
    for path in sorted(sizes, key=lambda p: (-sizes[p], p)):
        side = 0 if loads[0] <= loads[1] else 1
        sides[side].append(path)
        loads[side] += sizes[path]
    return set(sides[1])
