"""Run file analyses in a spawned process pool when the work is large enough to pay for it.

Spawning a worker costs a fresh interpreter plus tree-sitter imports (~0.2-0.3 s here), so
small searches stay in-process. The pool is created lazily, kept for the life of the process
(the MCP server reuses it across calls) and shut down at exit. Any pool failure (a worker
dies, the pool cannot start) falls back to in-process analysis of whatever is unfinished.

Workers live and die with cq (``workers.py``): killed at once on SIGTERM and ^C, gone on their
own when cq is killed outright, never holding its stdout or stderr.
"""

from __future__ import annotations

import atexit
import os
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

import msgspec

from cq.cancel import Check, never
from cq.classify.analyze import FileAnalysis, FileTask, analyze_batch, analyze_file
from cq.classify.workers import kill_on_sigterm, signals_held, worker_init, worker_init_args
from cq.env import env_int
from cq.errors import SearchCancelledError

_decoder = msgspec.msgpack.Decoder(FileAnalysis)
_pool: ProcessPoolExecutor | None = None
_pool_size = 0

# Parsing ~2 MB of source takes about a second on one core here; below that, a spawn costs
# more than it saves (bench/pool_breakeven.py measures it).
MIN_POOL_BYTES = env_int("CQ_POOL_MIN_BYTES", 3 * 1024 * 1024)
MAX_WORKERS = env_int("CQ_MAX_WORKERS", 4)


def worker_count(total_bytes: int) -> int:
    """Workers worth spawning for ``total_bytes`` of unparsed source (0 = stay in-process)."""
    if total_bytes < MIN_POOL_BYTES:
        return 0
    cpus = os.cpu_count() or 1
    return max(0, min(cpus, MAX_WORKERS, total_bytes // max(1, MIN_POOL_BYTES // 2)))


def analyze_all(
    tasks: list[FileTask], sizes: list[int], counters: dict[str, int], check: Check = never
) -> list[FileAnalysis]:
    """Analyses of ``tasks`` in order; uses the pool when the bytes justify it.

    ``check`` runs between files (in-process) or batches (pool) and may raise to cancel;
    batches not yet started are then dropped from the pool's queue.
    """
    workers = worker_count(sum(sizes))
    if workers < 2:
        return [_checked(check, task) for task in tasks]
    batches = _batches(tasks, sizes, workers * 3)
    results: list[list[FileAnalysis] | None] = [None] * len(batches)
    futures: list[Future[list[bytes]]] = []
    try:
        kill_on_sigterm(kill_workers)
        with signals_held():
            pool = _get_pool(workers)
            futures = [pool.submit(analyze_batch, batch) for batch in batches]
        for i, future in enumerate(futures):
            check()
            results[i] = [_decoder.decode(blob) for blob in future.result()]
        counters["pool_workers"] = workers
    except SearchCancelledError:
        for future in futures:
            future.cancel()
        raise
    except BaseException as exc:
        if not isinstance(exc, Exception):  # ^C or exit: running batches are not waited for
            kill_workers()
            raise
        shutdown_pool()
        counters["pool_failures"] = counters.get("pool_failures", 0) + 1
    out: list[FileAnalysis] = []
    for batch, done in zip(batches, results, strict=True):
        out.extend(done if done is not None else [_checked(check, task) for task in batch])
    return out


def _checked(check: Check, task: FileTask) -> FileAnalysis:
    check()
    return analyze_file(task)


def _batches(tasks: list[FileTask], sizes: list[int], count: int) -> list[list[FileTask]]:
    """Consecutive batches of roughly equal bytes (order preserved)."""
    target = max(1, sum(sizes) // max(1, count))
    batches: list[list[FileTask]] = [[]]
    acc = 0
    for task, size in zip(tasks, sizes, strict=True):
        if acc >= target and batches[-1]:
            batches.append([])
            acc = 0
        batches[-1].append(task)
        acc += size
    return batches


def _get_pool(workers: int) -> ProcessPoolExecutor:
    global _pool, _pool_size
    if _pool is None or _pool_size < workers:
        shutdown_pool()
        import multiprocessing

        _pool = ProcessPoolExecutor(
            workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=worker_init,
            initargs=worker_init_args(),
        )
        _pool_size = workers
    return _pool


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


def maybe_inject_fault() -> None:
    """Fault injection for tests: ``CQ_POOL_FAULT=exit`` kills the worker on its first batch."""
    if os.environ.get("CQ_POOL_FAULT") == "exit":
        os._exit(3)


__all__: list[Any] = ["analyze_all", "kill_workers", "shutdown_pool", "worker_count"]
