"""Run file analyses in a spawned process pool when the work is large enough to pay for it.

Spawning a worker costs a fresh interpreter plus tree-sitter imports (~0.2-0.3 s here), so
small searches stay in-process. The pool is created lazily, kept for the life of the process
(the MCP server reuses it across calls) and shut down at exit. Any pool failure (a worker
dies, the pool cannot start) falls back to in-process analysis of whatever is unfinished.

Workers die with their parent, however it ends (``worker_init``): a thread in each worker
waits on multiprocessing's parent sentinel, a pipe that reaches end-of-file when the parent
is gone, even by SIGKILL; on Linux, when the pool was started from the main thread,
``prctl(PR_SET_PDEATHSIG)`` has the kernel kill them at once as well (the signal follows the
thread that spawned them, so not from a worker thread of the MCP server). Workers ignore
SIGINT and write to /dev/null, so a dying worker never holds cq's stdout or stderr open; the
parent kills them on SIGTERM and on ^C before it exits, instead of waiting for running
batches. The resource tracker exits by itself once the parent and the workers are gone.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any

import msgspec

from cq.cancel import Check, never
from cq.classify.analyze import FileAnalysis, FileTask, analyze_batch, analyze_file
from cq.errors import SearchCancelledError

_decoder = msgspec.msgpack.Decoder(FileAnalysis)
_pool: ProcessPoolExecutor | None = None
_pool_size = 0

# Parsing ~2 MB of source takes about a second on one core here; below that, a spawn costs
# more than it saves (bench/pool_breakeven.py measures it).
MIN_POOL_BYTES = int(os.environ.get("CQ_POOL_MIN_BYTES", 3 * 1024 * 1024))
MAX_WORKERS = int(os.environ.get("CQ_MAX_WORKERS", 4))


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
        _kill_workers_on_sigterm()
        with _signals_held():
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

        main = threading.current_thread() is threading.main_thread()
        _pool = ProcessPoolExecutor(
            workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=worker_init,
            initargs=(os.getpid(), main),
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


def _kill_workers_on_sigterm() -> None:
    """On SIGTERM, kill the workers and exit with status 143 (128 + SIGTERM) through the
    normal exit path, which also frees the pool's semaphores (dying of the signal would leave
    the resource tracker to warn about them). Only where SIGTERM still has its default
    action (and in the main thread, where handlers run): a host that handles it keeps its
    handler."""
    main = threading.current_thread() is threading.main_thread()
    if not main or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def on_sigterm(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends it at once
        kill_workers()
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_sigterm)


@contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait while workers are spawned (submitting spawns them): a worker
    cut off before it has read its start-up data prints multiprocessing's traceback on cq's
    stderr, and is not yet in the executor's list of processes to kill."""
    if threading.current_thread() is not threading.main_thread():
        yield  # Python runs signal handlers in the main thread only
        return
    held: list[int] = []
    previous = {
        signum: signal.signal(signum, lambda signum, frame: held.append(signum))
        for signum in (signal.SIGINT, signal.SIGTERM)
        if signal.getsignal(signum) is not signal.SIG_IGN
    }
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if held:
            signal.raise_signal(held[0])  # delivered now, to the handler it was meant for


def worker_init(parent_pid: int, pdeathsig: bool) -> None:
    """Run in each worker before any batch: tie its life to the parent's (module docstring)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)
    if pdeathsig and sys.platform == "linux":
        import ctypes

        pr_set_pdeathsig = 1  # <linux/prctl.h>
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before the line above took effect
        os._exit(0)
    import multiprocessing

    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_with, args=(parent.sentinel,), daemon=True).start()


def _exit_with(parent_sentinel: int) -> None:
    """Block until the parent is gone (its sentinel pipe reads end-of-file), then exit."""
    from multiprocessing.connection import wait

    wait([parent_sentinel])
    os._exit(0)


atexit.register(shutdown_pool)


def maybe_inject_fault() -> None:
    """Fault injection for tests: ``CQ_POOL_FAULT=exit`` kills the worker on its first batch."""
    if os.environ.get("CQ_POOL_FAULT") == "exit":
        os._exit(3)


__all__: list[Any] = ["analyze_all", "kill_workers", "shutdown_pool", "worker_count"]
