"""The process's Pyrefly servers: one per searched root, at most ``MAX_SERVERS`` at once (the
least recently used stopped first, and any whose root went unsearched for ``IDLE_S``),
spawned on one thread that lives as long as cq (the child's parent death signal is tied to it).

A process that keeps its servers between searches (``cq mcp``'s search workers, cq's server:
``keep_warm``) starts its root's server with its first search and asks it in the background
(``later.py``); a one-shot search starts none unless told to wait (``stage.py``).
"""

from __future__ import annotations

import atexit
import contextlib
import queue
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cq.cache.place import SCRATCH
from cq.semantic.server import PyreflyServer

# Servers kept at once per process, least recently used stopped first: a long-lived caller
# (a test run, a script calling run_search over many trees) leaked one ~60 MB server per root
# (58 of them in one pytest worker); cq mcp has one root and a CLI search one.
MAX_SERVERS = 2
# A server whose root no search asked for this long is stopped at the next search of another
# root (hand-set: Pyrefly held 0.6-3.0 GB in 2-4 servers over a sitting of many roots; a
# root searched again after a minute pays a server start, ~1 s, in the background).
IDLE_S = 60.0


class ServerPool:
    """The servers of this process, one per root, and the thread that spawns them."""

    def __init__(self, cache_root: Callable[[], Path]) -> None:
        self._cache_root = cache_root
        self._servers: dict[str, PyreflyServer] = {}
        self._used: dict[str, float] = {}  # root -> when a search last asked for its server
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[PyreflyServer] = queue.SimpleQueue()
        self._spawner: threading.Thread | None = None
        self._hooked = False
        self._paused: set[str] = set()  # roots whose servers wait for this search's end
        self.warm = False  # this process keeps its servers between searches (``keep_warm``)

    def keep_warm(self) -> None:
        """Mark this process long-lived: its searches start the server and ask it in the
        background for what the cache lacks."""
        self.warm = True

    def get(self, root: str, binary: str | None, *, indexing: bool = True) -> PyreflyServer | None:
        """The server for ``root``, started in the background when there is none (or the
        last one died, or does not index as asked: its answers would differ), running
        ``binary`` (the search's, ``pyrefly_binary``), building the workspace index when
        ``indexing``; None when Pyrefly is not installed."""
        with self._lock:
            self._stop_idle(root)
            server = self._servers.pop(root, None)
            if server is not None and _reusable(server, indexing):
                self._servers[root] = server  # most recently used last
                return server
            if binary is None:
                return None
            if server is not None:
                _stop_quietly(server)
            scratch = self._cache_root() / SCRATCH
            server = PyreflyServer(root, binary, scratch, indexing=indexing)
            self._servers[root] = server
            while len(self._servers) > MAX_SERVERS:  # a library caller searching many roots
                _stop_quietly(self._servers.pop(next(iter(self._servers))))
            self._ensure_spawner()
        self._jobs.put(server)
        return server

    def pause(self) -> None:
        """A search starts in this long-lived process: every server stops (SIGSTOP) until
        ``release``, unless the search waits for its answers (``resume``). A search that does
        not wait shows none of what they work out now: they check trees for later searches,
        on the cores this one is waiting for, and their lower priority still left a busy
        server's identifier search at 1.6x its settled time (``python -m bench.background``;
        bench/results/2026-11-30-speed10). A stopped server keeps its state; the background
        steps that ask it wait for the search's end too (``later.py``)."""
        with self._lock:
            for root, server in self._servers.items():
                if _signal(server, signal.SIGSTOP):
                    self._paused.add(root)

    def resume(self, root: str) -> None:
        """The server of ``root`` runs again: the search waits for its answers."""
        with self._lock:
            if root in self._paused:
                self._paused.discard(root)
                if (server := self._servers.get(root)) is not None:
                    _signal(server, signal.SIGCONT)

    def release(self) -> None:
        """The search is over: every server stopped for it runs again."""
        with self._lock:
            for root in self._paused:
                if (server := self._servers.get(root)) is not None:
                    _signal(server, signal.SIGCONT)
            self._paused.clear()

    def _stop_idle(self, root: str) -> None:
        """Stop the servers of other roots not asked for within ``IDLE_S`` (under the lock)."""
        now = time.monotonic()
        self._used[root] = now
        for other, used in list(self._used.items()):
            if now - used > IDLE_S:
                del self._used[other]
                if (server := self._servers.pop(other, None)) is not None:
                    _stop_quietly(server)

    def running(self, root: str) -> PyreflyServer | None:
        """The server already registered for ``root`` (tests and benches inspect its pid)."""
        with self._lock:
            return self._servers.get(root)

    def stop_all(self) -> None:
        with self._lock:
            servers = list(self._servers.values())
            self._servers.clear()
        for server in servers:
            _stop_quietly(server)

    def _ensure_spawner(self) -> None:
        if self._spawner is None:
            self._spawner = threading.Thread(target=self._spawn_loop, name="cq-lsp", daemon=True)
            self._spawner.start()
        if not self._hooked:
            self._hooked = True
            atexit.register(self.stop_all)
            _chain_sigterm(self.stop_all)

    def _spawn_loop(self) -> None:
        while True:
            server = self._jobs.get()
            try:
                server.spawn()
            except OSError as exc:
                server.error = f"cannot start pyrefly: {exc}"
                server.initialized.set()
                continue
            threading.Thread(target=server.handshake, name="cq-lsp-init", daemon=True).start()


def _reusable(server: PyreflyServer, indexing: bool) -> bool:
    """Starting or alive, and indexing as asked."""
    same = server.requested_indexing == indexing
    return same and (not server.initialized.is_set() or server.alive())


def _signal(server: PyreflyServer, signum: int) -> bool:
    """Send ``signum`` to the server's process when it runs; whether it was sent."""
    process = server.process
    if process is None or process.poll() is not None:
        return False
    try:
        process.send_signal(signum)
    except OSError:
        return False
    return True


def _stop_quietly(server: PyreflyServer) -> None:
    with contextlib.suppress(Exception):  # best effort; the death signal covers the rest
        server.stop()


def _chain_sigterm(stop: Callable[[], None]) -> None:
    """On SIGTERM: stop the servers, then do what was installed before (default: exit)."""
    if threading.current_thread() is not threading.main_thread():
        return  # only the main thread may install handlers; the death signal still applies
    previous = signal.getsignal(signal.SIGTERM)

    def handler(signum: int, frame: Any) -> None:
        stop()
        if callable(previous):
            previous(signum, frame)
        else:
            raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)


_POOL_LOCK = threading.Lock()
_POOL: list[ServerPool] = []


def pool() -> ServerPool:
    """The process's server pool, created on first use (its servers stop at exit)."""
    with _POOL_LOCK:
        if not _POOL:
            from cq.cache.store import cache_dir

            _POOL.append(ServerPool(cache_dir))
        return _POOL[0]
