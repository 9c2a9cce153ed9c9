"""What a long-lived cq process does once so that its searches start warm.

Shared by the server's search processes (``worker.py``) and ``cq mcp``'s search process
(``cq.agent.search_worker``). The search path's modules are imported up front, the Pyrefly pool
is told the process lives across searches (its servers stay up, one per recently searched root,
``cq.semantic.pool.MAX_SERVERS`` at most), and the heavy parsers are imported in a background
thread that stops once a search starts and goes on after it (``warm_between``). What survives
between searches: the imports, the classifier's worker pool and the fork server that starts
its workers (started by the warm-up: ``cq.classify.pool.start_fork_server``), the open cache
store and digest memory, the repository indexes opened, the Pyrefly servers.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import sys
import threading

# The first search should not pay for these; the warm-up stops once a search starts, which
# imports what it needs itself (a second thread importing LibCST only slowed the first
# search: bench/results/2026-11-29-figures-from-cq.md).
_HEAVY_MODULES = ("ast_grep_py", "tree_sitter_python", "tree_sitter_rust", "libcst")
# Imported only once the process has had no search for _QUIET_S: LibCST's import holds the
# interpreter ~133 ms (``python -X importtime``), and a search that came meanwhile (an
# audit, ``cq server start`` then the search at once: it needs no LibCST) shared it with the
# import: bench.audit_scale --server, 2.81 s against 2.73 s with LibCST left out of the
# warm-up, 2.79 s when the search came 3 s after the start (bench/results/2026-12-01-speed17).
_QUIET_MODULES = ("libcst",)
_QUIET_S = 0.5
# No full collection while a search runs: one walks every object the process keeps between
# searches (vocabularies, indexes, parse caches) and is set off by whatever search comes when
# enough of them have piled up: 51 ms of a 205 ms warm question on moto right after searches
# on two other roots (gc.callbacks in the search process; bench.background's busy warm
# question, bench/results/2026-12-01-speed17). Automatic collections stop at the middle
# generation; the full one runs once the process has had no search for _QUIET_S
# (``_when_quiet``). A burst that never pauses leaves its cyclic garbage uncollected until
# then, or until the process retires past its memory bound (cq.server.memory).
_NO_FULL_COLLECTIONS = 1 << 30


def warm_process(searching: threading.Event) -> None:
    """Import the search path and keep Pyrefly warm; heavy parsers load until ``searching``."""
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, _NO_FULL_COLLECTIONS)
    threading.Thread(target=_warm_up, args=(searching,), name="cq-warm", daemon=True).start()
    import cq.pipeline
    import cq.report  # noqa: F401
    from cq.parse import searches_again
    from cq.semantic import keep_servers_warm

    keep_servers_warm()
    searches_again()
    gc.freeze()  # what start-up made is kept for life: later collections need not walk it


def search_begins(searching: threading.Event) -> None:
    """A search starts: the warm-up stops, and the Pyrefly batches earlier searches queued
    wait until ``warm_between`` (a batch's Python work would share the interpreter lock with
    this search, and its Pyrefly the cores, for answers this search does not show); the
    Pyrefly servers stop meanwhile, unless the search waits for one (``pool.pause``)."""
    from cq.semantic.later import later
    from cq.semantic.pool import pool

    searching.set()
    later().hold()
    pool().pause()


def warm_between(searching: threading.Event) -> None:
    """A search is done: queued Pyrefly batches run, and once no other search has come for
    ``_QUIET_S`` the heavy parsers the warm-up has not reached (a search that came at once
    stopped it) are imported and the garbage collected (``_when_quiet``). Without the
    imports the first question that needs LibCST paid its import on top of LibCST's own
    work."""
    from cq.semantic.later import later
    from cq.semantic.pool import pool

    pool().release()
    later().release()
    searching.clear()
    threading.Thread(target=_when_quiet, args=(searching,), name="cq-quiet", daemon=True).start()


def _when_quiet(searching: threading.Event) -> None:
    """What waits for a pause between searches; a search that starts stops it between steps."""
    if searching.wait(_QUIET_S):
        return
    for name in _HEAVY_MODULES:
        if searching.is_set():
            return
        if name not in sys.modules:
            with contextlib.suppress(ImportError):
                importlib.import_module(name)
    if not searching.is_set():
        gc.collect()


def _warm_up(searching: threading.Event) -> None:
    from cq.classify.pool import start_fork_server

    with contextlib.suppress(OSError):  # without it the pool starts one itself
        start_fork_server()
    for name in _HEAVY_MODULES:  # a missing one is reported by the stage that needs it
        if searching.is_set() or (name in _QUIET_MODULES and searching.wait(_QUIET_S)):
            return
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
