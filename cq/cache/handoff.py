"""A one-shot search's cache writes, stored by a child once cq has answered and gone.

A cold search stores what it computed (records, verdicts, enrichment, file digests) after its
answer is ready: for a cold 'get' on the stdlib, 1,700 entries written in 24 ms and the
write-ahead log folded back at close in 7 more, on the process the user waits for. So the
one-shot CLI keeps its writes (``defer_writes``) and, as it exits, forks a
child that stores them (``close_handing_off``); the user gets the prompt back at once.

Why a later cq still finds them, and nothing breaks:

- **Seen by the next search.** The writer lock (``sharing.hold_writer``) is taken here before
  the fork and held by the child until it has stored and closed; every store opened
  meanwhile, in any cq, first waits for it (``sharing.wait_for_writer``), so a search
  started after this one ended finds what it stored.
- **sqlite across a fork.** Every connection of this process is closed before the fork, so
  the child inherits no state of an open database (sqlite.org/howtocorrupt.html, 2.6); it
  opens its own.
- **Nothing held.** Only a process with one thread forks (``cq.forked.possible``); the child
  has its own session (a ^C at the next prompt is not its), its standard streams on
  /dev/null (a pipe reading cq's output ends when cq does) and leaves with ``os._exit``.
- **When it cannot** (another thread, the writer lock held by another cq's writer, a
  failed fork), the writes are stored here as before.
"""

from __future__ import annotations

import gc
import os
import signal
import warnings
from pathlib import Path

from cq import forked
from cq.cache import sharing
from cq.cache.store import Store, keep_writes

Writes = dict[tuple[str, str], bytes]


def defer_writes() -> None:
    """Keep this process's cache writes for its end, then hand them to a child (the one-shot
    CLI's search, whose answer need not wait for them)."""
    keep_writes(close_handing_off)


def close_handing_off(stores: list[Store]) -> None:
    """Close ``stores``, their kept writes stored by a forked child when one can be (else
    here, before each closes)."""
    kept = [(store, store.take_deferred()) for store in stores]
    writes = [(store.path, store.max_bytes, taken) for store, taken in kept if taken]
    if writes and _hand_off(writes, stores):
        return
    for store, taken in kept:
        if taken:
            store.put_taken(taken)
    for store in stores:
        store.close()


def _hand_off(writes: list[tuple[Path, int, Writes]], stores: list[Store]) -> bool:
    """Whether a child took ``writes`` (``stores`` are then closed); False leaves both as
    they were."""
    if not forked.possible():
        return False
    locks: list[int] = []
    for path, _, _ in writes:
        held = sharing.hold_writer(path)
        if held is None:  # another cq's writer is still at it: store ours here
            for fd in locks:
                os.close(fd)
            return False
        locks.append(held)
    for store in stores:
        store.close()  # nothing kept is left in them: a plain close
    try:
        with warnings.catch_warnings():  # Python 3.12+ warns of the progress thread
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:
        pid = None
    if pid == 0:  # pragma: no cover - runs in the child (tests see what it stored)
        _writer(writes)
    if pid is None:  # no child: stored here, under the writer lock still held here
        _store(writes)
    for fd in locks:
        os.close(fd)  # the child's copies hold the lock until it ends
    return True


def _writer(writes: list[tuple[Path, int, Writes]]) -> None:  # pragma: no cover - child
    status = 1
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not a handler of the parent's
        warnings.simplefilter("ignore")
        gc.disable()  # a short life: a collection would only copy the parent's pages
        _store(writes)
        status = 0
    finally:
        os._exit(status)


def _store(writes: list[tuple[Path, int, Writes]]) -> None:
    """Store ``writes`` through connections of their own (the writer lock is held: no
    waiting for it). A store that fails is a later miss, and its warning, which nobody
    reads here, is left for the next cq to print (``sharing.leave_notice``)."""
    for path, max_bytes, taken in writes:
        try:
            store = Store(path, max_bytes, warn=False, after_writer=False)
            store.put_taken(taken)
            store.close()
            notice = store.notice
            if store.fault is not None:
                notice = f"the last search's results were not all stored: {store.fault}"
        except Exception as exc:
            notice = f"the last search's results were not stored: {exc}"
        if notice is not None:
            sharing.leave_notice(path, notice)
