"""How pool workers live and die with cq: whatever ends cq ends them, at once.

- cq killed outright (SIGKILL): a thread in each worker waits on multiprocessing's parent
  sentinel, a pipe that reads end-of-file once the parent is gone; on Linux, for a pool
  started from the main thread, ``prctl(PR_SET_PDEATHSIG)`` has the kernel kill them too.
  A fork server's workers (a long-lived process's pool, ``cq.classify.pool``) wait on a
  descriptor of cq's process (``pidfd_open``) instead; the fork server exits once they have.
- SIGTERM: the parent kills its workers and exits with 143 through the normal exit path.
- ^C: workers ignore SIGINT; the parent's KeyboardInterrupt kills them (``pool.py``) instead
  of waiting for the batches they run.
- Either signal arriving while workers are spawned waits until they are (``signals_held``).
Workers write to /dev/null, so none holds cq's stdout or stderr open, and the resource
tracker exits by itself once the parent and the workers are gone.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


def kill_on_sigterm(kill_workers: Callable[[], None]) -> None:
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
def signals_held() -> Iterator[None]:
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


def worker_init_args(start_method: str = "spawn") -> tuple[int, bool, bool]:
    """``worker_init``'s arguments for workers started from this thread by ``start_method``:
    this process's pid, whether the kernel's parent-death signal can be used (its "parent"
    is the thread that made the worker: only the main thread lives as long as the process),
    and whether a fork server made them (their parent is the fork server then)."""
    if start_method == "forkserver":
        return os.getpid(), False, True
    return os.getpid(), threading.current_thread() is threading.main_thread(), False


def worker_init(parent_pid: int, pdeathsig: bool, via_forkserver: bool = False) -> None:
    """Run in each worker before any batch: tie its life to the parent's (see the module).
    A forked worker also drops the parent's SIGTERM handler (it would kill the parent's pool
    from the child), writes to stream objects of its own, and freezes what it inherited out
    of the collector's sight (a collection would walk, and so copy, the parent's pages)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    gc.freeze()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)
    # Fresh stream objects: a forked worker's copies may hold a lock the progress line's
    # thread held at the fork, and multiprocessing flushes the streams as the worker exits.
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - kept for the worker's life
    if via_forkserver:
        threading.Thread(target=_exit_with, args=(_pidfd(parent_pid),), daemon=True).start()
        return
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


def _pidfd(pid: int) -> int:
    """A descriptor that reads as ready once ``pid`` has exited: a fork server's worker
    watches cq through it. Neither the parent-death signal nor multiprocessing's sentinel
    serves there: the parent is the fork server, which lives as long as its workers (they
    hold a pipe it waits on), and the sentinel is the pipe the worker's start-up data came
    by, at end-of-file at once. Exits now when cq is gone already."""
    try:
        return os.pidfd_open(pid)
    except ProcessLookupError:
        os._exit(0)


def _exit_with(parent_sentinel: int) -> None:
    """Block until the parent is gone (its sentinel pipe reads end-of-file), then exit."""
    from multiprocessing.connection import wait

    wait([parent_sentinel])
    os._exit(0)
