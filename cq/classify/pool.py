"""Run file analyses in a process pool when the work is large enough to pay for it.

Spawning a worker costs a fresh interpreter plus tree-sitter imports, so small searches stay
in-process (the threshold is ``cq.model.tuning.ScaleTuning``'s, with its measurement; the
start's cost: bench/results/2026-11-29-figures-from-cq.md). A process that may fork
(``cq.forked.possible``: the CLI's one-shot search, no thread but the progress line's) forks
its workers instead: they start with the parsers imported, so the search's first batches do
not wait for two interpreters to import them on the cores the search needs, and they go when
its classification is done (``search_done``), so enrichment may fork its own helper. A
long-lived process (the server's search processes, ``cq mcp``) has threads: its workers are
forked by a fork server (one interpreter with the parsers imported, started while the
process is idle: ``start_fork_server``) and kept for its later searches. Pools are created
lazily and shut down at exit. Any pool failure (a worker dies, the pool cannot start) falls
back to in-process analysis of whatever is unfinished.

Workers live and die with cq (``cq/workers.py``): killed at once on SIGTERM and ^C, gone on their
own when cq is killed outright, never holding its stdout or stderr.

Work streams: ``Analyzer.feed`` takes the tasks of one chunk of files and yields the analyses
finished so far, in submission order, so the engine classifies and drops each file's records
while later files are still being read; at most ``MAX_IN_FLIGHT_BYTES`` of source wait in
the pool at once. The sizes are ``cq.model.tuning.ScaleTuning``.
"""

from __future__ import annotations

import atexit
import os
import sys
import warnings
from collections import deque
from collections.abc import Iterator
from typing import TYPE_CHECKING

import msgspec

from cq import forked
from cq.cancel import Check, never
from cq.classify.analyze import (
    FileAnalysis,
    FileTask,
    analyze_batch,
    analyze_file,
    parse_bytes,
    planned,
    ready,
)
from cq.errors import SearchCancelledError
from cq.model.tuning import ParseTuning, ScaleTuning
from cq.workers import kill_on_sigterm, signals_held, worker_init, worker_init_args

if TYPE_CHECKING:  # imported when a pool starts: ~25 ms of CPU a search in-process skips
    from concurrent.futures import Future, ProcessPoolExecutor

_decoder = msgspec.msgpack.Decoder(FileAnalysis)
_batch_decoder = msgspec.msgpack.Decoder(list[FileAnalysis])
_pool: ProcessPoolExecutor | None = None
_pool_size = 0
_pool_forked = False  # its workers are forks of this process (``_get_pool``)


def worker_count(total_bytes: int, scale: ScaleTuning) -> int:
    """Workers worth spawning for ``total_bytes`` of unparsed source (0 = stay in-process)."""
    if total_bytes < scale.pool_min_bytes:
        return 0
    cpus = os.cpu_count() or 1
    workers = total_bytes // max(1, scale.pool_min_bytes // 2)
    return max(0, min(cpus, scale.max_workers, workers))


Done = tuple[FileTask, FileAnalysis]


class Analyzer:
    """Analyses of the tasks fed to it, in order: in-process for small work, else in the pool.

    ``check`` runs between files (in-process) or batches (pool) and may raise to cancel;
    batches not yet started are then dropped from the pool's queue.
    """

    def __init__(self, caps: ParseTuning, scale: ScaleTuning, check: Check = never) -> None:
        self.caps, self.scale, self.check = caps, scale, check
        self.pending: list[FileTask] = []  # not yet placed: in-process or pool is undecided
        self.pending_bytes = 0
        self.sampled_bytes = 0  # source planned here while the pool was undecided
        self.sampled_work = 0  # what that source parses (its slices, or whole files)
        self.pending_work = 0  # what the pending tasks parse: planned, or estimated
        self.flight: deque[tuple[list[FileTask], int, Future[list[bytes]]]] = deque()
        self.flight_bytes = 0
        self.pool: ProcessPoolExecutor | None = None
        self.workers = 0
        self.batch_bytes = scale.batch_bytes
        self.failures = 0
        self.helped = 0  # files a forked helper analysed (``_turns``)

    def feed(self, tasks: list[FileTask], expected_bytes: int) -> Iterator[Done]:
        """Take ``tasks``; yield the analyses finished meanwhile. ``expected_bytes`` guesses
        how much more source is still to come (it decides the pool's size).

        While the pool is undecided the first tasks' slices (``plan_sample_bytes`` of their
        source) are planned here, the plans going with the tasks, and the other tasks' parse
        work is estimated from that sample (``_work``: they are planned where they are
        analysed, in parallel), so the decision weighs the bytes that will be parsed: a sliced file
        parses a few percent of its bytes (a cold 'register' on the stdlib without
        site-packages hands over 5.3 MB of files and parses 0.45 MB of them: no pool's
        worth, where two workers' start-up cost 0.5 CPU-s). The pool starts when the work
        planned so far reaches ``pool_min_bytes``, or earlier when, projected over the
        source still to come, it reaches ``pool_projected_bytes``: a projection from the
        first files is rough, so it must promise well over the threshold (an audit search
        waited for its planned work while this process read and planned three times as
        much source by itself, both workers idle)."""
        undecided = self.pool is None and self.failures == 0
        if undecided:
            tasks = [self._sampled(t) for t in tasks]
            self.pending_work += sum(self._work(t) for t in tasks)
        self.pending += tasks
        self.pending_bytes += sum(len(t.data) for t in tasks)
        if undecided:
            expected_work = expected_bytes * self.sampled_work // max(1, self.sampled_bytes)
            projected = self.pending_work + expected_work
            workers = worker_count(projected, self.scale)
            due = self.pending_work >= self.scale.pool_min_bytes
            if (due or projected >= self.scale.pool_projected_bytes) and workers >= 2:
                # Small work still makes three batches a worker, so every worker gets some.
                share = (self.pending_bytes + expected_bytes) // (workers * 3)
                self.batch_bytes = max(1, min(self.scale.batch_bytes, share))
                self._start(workers)
        if self.pool is not None:
            yield from self._submit_pending()
            yield from self._collect(block=False)
        elif self.failures:
            yield from self._run_pending()

    def drain(self) -> Iterator[Done]:
        """Everything not yet yielded, in order."""
        if self.pool is not None:
            yield from self._submit_pending()
            yield from self._collect(block=True)
        yield from self._run_pending()

    def _sampled(self, task: FileTask) -> FileTask:
        """The task planned here while the sample is short of ``plan_sample_bytes``."""
        if self.sampled_bytes >= self.scale.plan_sample_bytes:
            return task
        task = planned(task, self.caps)
        self.sampled_bytes += len(task.data)
        self.sampled_work += parse_bytes(task)
        return task

    def _work(self, task: FileTask) -> int:
        """What ``task`` parses: planned, or estimated from the sample (its slices parse
        that share of their files' bytes; a file with more hits than slicing allows, all)."""
        if task.plan is not None or not task.hits or len(task.hits) > self.caps.max_slice_hits:
            return parse_bytes(task)
        return len(task.data) * self.sampled_work // max(1, self.sampled_bytes)

    def _run_pending(self) -> Iterator[Done]:
        """The pending tasks analysed here, with a forked helper taking turns when their
        work is worth one (``cq.forked.Turns``)."""
        tasks, self.pending, self.pending_bytes = self.pending, [], 0
        sizes = [self._work(t) for t in tasks]
        groups = _groups(sorted(range(len(tasks)), key=lambda n: (-sizes[n], n)))
        turns = None
        if self.failures == 0 and len(tasks) >= 2 and sum(sizes) >= self.scale.helper_min_bytes:
            turns = _turns(tasks, groups, self.caps)
        done: dict[int, FileAnalysis] = {}
        try:
            while turns is not None and (k := turns.take()) is not None:
                for n in groups[k]:
                    self.check()
                    done[n] = analyze_file(tasks[n], self.caps)
            theirs = turns.finish() if turns is not None else None
            for k, blob in (theirs or {}).items():
                analyses = _batch_decoder.decode(blob)
                done.update(zip(groups[k], analyses, strict=True))
                self.helped += len(analyses)
            for n, task in enumerate(tasks):  # all of them when no helper took turns
                if n not in done:
                    self.check()
                    done[n] = analyze_file(task, self.caps)
        except BaseException:
            if turns is not None:
                turns.abandon()
            raise
        for n, task in enumerate(tasks):
            yield task, done[n]

    def _start(self, workers: int) -> None:
        try:
            kill_on_sigterm(kill_workers)
            with signals_held():
                self.pool = _get_pool(workers)
            self.workers = workers
        except Exception:  # a pool that cannot start: stay in-process
            self._fail()

    def _submit_pending(self) -> Iterator[Done]:
        batch: list[FileTask] = []
        size = 0
        tasks, self.pending, self.pending_bytes = self.pending, [], 0
        for task in tasks:
            batch.append(task)
            size += len(task.data)
            if size >= self.batch_bytes:
                yield from self._send(batch, size)
                batch, size = [], 0
        if batch:
            yield from self._send(batch, size)

    def _send(self, batch: list[FileTask], size: int) -> Iterator[Done]:
        while self.flight and self.flight_bytes + size > self.scale.max_in_flight_bytes:
            yield from self._take_first()
        if self.pool is None:  # it failed meanwhile
            self.pending += batch
            return
        try:
            with signals_held(), warnings.catch_warnings():  # submitting starts the workers
                warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: the progress thread
                future = self.pool.submit(analyze_batch, batch, self.caps)
        except Exception:
            self._fail()
            self.pending += batch
            return
        self.flight.append((batch, size, future))
        self.flight_bytes += size

    def _collect(self, *, block: bool) -> Iterator[Done]:
        while self.flight and (block or self.flight[0][2].done()):
            yield from self._take_first()

    def _take_first(self) -> Iterator[Done]:
        batch, size, future = self.flight.popleft()
        self.flight_bytes -= size
        self.check()
        try:
            blobs = future.result()
        except SearchCancelledError:
            raise
        except Exception:  # a dead worker: this batch and the rest finish in-process
            self._fail()
            blobs = None
        except BaseException:  # ^C or exit: running batches are not waited for
            kill_workers()
            raise
        if blobs is None:
            for task in batch:
                self.check()
                yield task, analyze_file(task, self.caps)
            return
        for task, blob in zip(batch, blobs, strict=True):
            yield task, _decoder.decode(blob)

    def _fail(self) -> None:
        """Give up on the pool for this search: unfinished batches go back to pending."""
        self.failures += 1
        for batch, _, future in self.flight:
            future.cancel()
            self.pending += batch
        self.flight.clear()
        self.flight_bytes = 0
        self.pool = None
        shutdown_pool()

    def cancel(self) -> None:
        """Drop the batches not yet started (a cancelled search)."""
        for _, _, future in self.flight:
            future.cancel()
        self.flight.clear()


def _groups(order: list[int]) -> list[list[int]]:
    """Tasks in ``order`` as the items of a ``forked.Turns``: one a task, or runs of
    consecutive ones when there are more tasks than it takes items."""
    per = -(-len(order) // forked.Turns.MAX_ITEMS) or 1
    return [order[i : i + per] for i in range(0, len(order), per)]


def _turns(
    tasks: list[FileTask], groups: list[list[int]], caps: ParseTuning
) -> forked.Turns | None:
    """A forked helper taking turns with this process at the ``groups`` of ``tasks``: no
    start-up to pay, unlike a pool's spawned worker, and an analysis is a pure function of
    its task, so who runs it changes nothing. None when no helper can be forked."""
    if not forked.possible():
        return None
    ready({tasks[n].language for group in groups for n in group})
    encoder = msgspec.msgpack.Encoder()
    return forked.Turns.start(
        len(groups), lambda k: encoder.encode([analyze_file(tasks[n], caps) for n in groups[k]])
    )


def _get_pool(workers: int) -> ProcessPoolExecutor:
    global _pool, _pool_size, _pool_forked
    if _pool is None or _pool_size < workers:
        shutdown_pool()
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        _pool_forked = forked.possible()
        start = "fork" if _pool_forked else _LONG_LIVED_START
        context = multiprocessing.get_context(start)
        if start == "forkserver":
            context.set_forkserver_preload(list(_PRELOADED))
        _pool = ProcessPoolExecutor(
            workers,
            mp_context=context,
            initializer=worker_init,
            initargs=worker_init_args(start),
        )
        _pool_size = workers
    return _pool


# A long-lived process (threads: no fork of it is safe) has its workers forked by a fork
# server, one interpreter that imported the parsers once: a spawned worker imports them
# itself (~0.1 CPU-s each, paid by the first large search: bench/results/2026-11-30-speed10).
_LONG_LIVED_START = "forkserver" if sys.platform == "linux" else "spawn"
_PRELOADED = (
    "cq.classify.analyze",
    "cq.classify.python_records",
    "tree_sitter_python",
    "cq.enrich.share",  # a worker may take a share of a search's enrichment (``helper_pool``)
    "ast_grep_py",
)


def start_fork_server() -> None:
    """Start the fork server a long-lived process's pool will use, its parsers imported,
    while the process has nothing else to do (``cq.server.warm``): the first large search's
    workers are then forks of it, with nothing to import."""
    if _LONG_LIVED_START != "forkserver":
        return
    import multiprocessing
    from multiprocessing import forkserver

    multiprocessing.get_context("forkserver").set_forkserver_preload(list(_PRELOADED))
    forkserver.ensure_running()


def helper_pool() -> ProcessPoolExecutor | None:
    """The long-lived process's pool when it is up (it stays between searches), for a later
    stage's share of pure work (``cq.enrich.share``): such a process cannot fork a helper
    (``cq.forked``); None in a process that may (its pool went with its classification)."""
    return _pool if _pool is not None and not _pool_forked else None


def search_done() -> None:
    """A search's classification is over: a forked pool goes (its workers are copies of a
    process with no thread to keep, the one-shot CLI's, which runs one search), its threads
    joined, so the stages after it may fork their own helpers (``cq.forked``); a spawned pool
    stays for the next search of a long-lived process."""
    global _pool, _pool_size
    if _pool is not None and _pool_forked:
        _pool.shutdown(wait=True)
        _pool, _pool_size = None, 0


def shutdown_pool() -> None:
    """Stop the pool's workers (called at exit; safe to call any time)."""
    global _pool, _pool_size
    if _pool is not None:
        _pool.shutdown(wait=False, cancel_futures=True)
        _pool, _pool_size = None, 0


def kill_workers() -> None:
    """SIGKILL every worker now and drop the pool (their work is of no more use)."""
    global _pool, _pool_size
    if _pool is not None:
        # ``_processes`` is the executor's pid -> Process map (no public way before 3.14).
        for process in list((getattr(_pool, "_processes", None) or {}).values()):
            process.kill()
        # Waiting lets the executor's own thread see the dead workers and close its queues
        # (closing them under its feet makes a feeder thread print a traceback).
        _pool.shutdown(wait=True, cancel_futures=True)
        _pool, _pool_size = None, 0


atexit.register(shutdown_pool)

__all__ = [
    "Analyzer",
    "helper_pool",
    "kill_workers",
    "search_done",
    "shutdown_pool",
    "start_fork_server",
    "worker_count",
]
