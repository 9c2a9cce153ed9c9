"""The server's search processes: one started with the server, a second for an overlap.

A search goes to a ready, idle process, at once, or nowhere: a search never waits for a
process. When none is free the server starts one in the background (up to ``MAX_PROCESSES``)
for the searches to come, and this one runs in the client's own process. So a process that is
busy for long (a huge search, output to a pipe nobody reads) or stopped (SIGSTOP, ^Z) holds
back nobody else: the next client searches in-process, as fast as ``CQ_SERVER=0`` would.
A process is ready once it has imported the search path (its ``ready``), and idle again on
its ``done``; a stopped one is passed over even when idle. A process that dies is dropped
(its client sees the connection close) and the next search starts another. A process whose
client went away while it is stopped can never let go of the client's descriptors (a
stopped process runs no code): it is killed. ``close`` ends them all: end of input first (an
idle one exits at once, a busy one after its search), then SIGTERM, then SIGKILL.

Memory goes back (``memory.py``): a process that says it retires with its ``done`` (past its
size or roots bound) is replaced at once by a fresh one, and one idle for
``memory.WORKER_IDLE_S`` is ended (``reap``) while the daemon stays.
"""

from __future__ import annotations

import contextlib
import select
import socket
import subprocess
import sys
import threading
import time
from typing import Any

from cq.server.memory import WORKER_IDLE_S
from cq.server.wire import Channel, WireError

MAX_PROCESSES = 2  # as cq mcp's: each holds ~100 MB warm; two cover an agent's overlap
_EXIT_GRACE_S = 3.0  # a busy process's search may finish before it is signalled
_WATCH_S = 0.5  # how often a search's watch looks whether its process is done with it


class _Process:
    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.popen = subprocess.Popen(
                [sys.executable, "-m", "cq.server.worker", str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.channel = Channel(ours)
        self.busy = False
        self.searches = 0  # searches handed to it: a watch knows its search is over
        self.idle_since = time.monotonic()

    def stopped(self) -> bool:
        """Whether the process is stopped (SIGSTOP, SIGTSTP) or held by a tracer."""
        try:
            with open(f"/proc/{self.popen.pid}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False
        return state in (b"T", b"t")


class Processes:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._all: list[_Process] = []
        self._idle: list[_Process] = []
        self._last_done = time.monotonic()
        self.served = 0

    def start_one(self) -> None:
        with self._cond:
            if not self._all:
                self._start()

    def hand(self, message: dict[str, Any], fds: list[int]) -> _Process | None:
        """Give a search and its descriptors to a free process; None when none is free now
        (one is started for later when there is room)."""
        while (process := self._take()) is not None:
            try:
                process.channel.send(message, fds)
            except OSError:  # it died idle; the next one may serve
                self._drop(process)
                continue
            with self._cond:
                self.served += 1  # counted when handed on: a client sees it at once
            return process
        return None

    def watch(self, process: _Process, conn: socket.socket) -> None:
        """Until ``process`` is done with the search it was handed: if its client goes away
        while the process is stopped, kill the process (it would hold the client's pipes
        until someone continues it; a running one lets go by itself)."""
        with self._cond:
            search = process.searches
        poller = select.poll()
        poller.register(conn, select.POLLRDHUP)
        while True:
            with self._cond:
                if process.searches != search or not process.busy or process not in self._all:
                    return
            if not poller.poll(_WATCH_S * 1000):
                continue
            if process.stopped():
                process.popen.kill()
                self._drop(process)
                return
            time.sleep(_WATCH_S)  # gone, and the process is letting go of the search

    def reap(self) -> None:
        """End the processes idle for ``WORKER_IDLE_S``: taken out of the idle list first (no
        search can be handed to them after), then told to go (end of input)."""
        now = time.monotonic()
        with self._cond:
            stale = [p for p in self._idle if now - p.idle_since > WORKER_IDLE_S]
            for process in stale:
                self._idle.remove(process)
                self._all.remove(process)
        for process in stale:
            with contextlib.suppress(OSError):
                process.channel.sock.shutdown(socket.SHUT_RDWR)

    def pids(self) -> list[int]:
        with self._cond:
            return [p.popen.pid for p in self._all]

    def idle_seconds(self) -> float:
        """Seconds since the last search ended or a process got ready; 0 while a search runs
        or a process is starting (its warm-up is no idleness)."""
        with self._cond:
            if any(p.busy or p not in self._idle for p in self._all):
                return 0.0
            return time.monotonic() - self._last_done

    def count(self) -> int:
        with self._cond:
            return len(self._all)

    def ready(self) -> int:
        """Processes ready for a search now (idle, and not stopped)."""
        with self._cond:
            return sum(not p.stopped() for p in self._idle)

    def busy(self) -> int:
        with self._cond:
            return sum(p.busy for p in self._all)

    def close(self) -> None:
        with self._cond:
            processes = list(self._all)
        for process in processes:
            with contextlib.suppress(OSError):
                process.channel.sock.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + _EXIT_GRACE_S
        for process in processes:
            for signal_it in (None, process.popen.terminate, process.popen.kill):
                if signal_it is not None:
                    signal_it()
                try:
                    process.popen.wait(timeout=max(0.1, deadline - time.monotonic()))
                    break
                except subprocess.TimeoutExpired:
                    deadline = time.monotonic() + 2.0

    def _start(self) -> None:
        """Start a process (called holding the lock); it joins the idle ones when ready."""
        process = _Process()
        self._all.append(process)
        threading.Thread(target=self._follow, args=(process,), daemon=True).start()

    def _take(self) -> _Process | None:
        with self._cond:
            ready = [p for p in self._idle if not p.stopped()]
            if ready:
                process = ready[-1]
                self._idle.remove(process)
                process.busy = True
                process.searches += 1
                return process
            starting = any(not p.busy and p not in self._idle for p in self._all)
            if len(self._all) < MAX_PROCESSES and not starting:
                # for the searches to come; this one does not wait for it. Out of descriptors
                # or memory now, the next search tries again.
                with contextlib.suppress(OSError):
                    self._start()
            return None

    def _follow(self, process: _Process) -> None:
        """Read the process's ``ready`` and ``done``s; its end of output means it is gone."""
        with contextlib.suppress(OSError, WireError):
            while (message := process.channel.recv()[0]) is not None:
                if message["kind"] in ("ready", "done"):
                    with self._cond:
                        process.busy = False
                        process.idle_since = self._last_done = time.monotonic()
                        if message.get("retire"):
                            if process in self._all:  # it exits now; a fresh one warms at once
                                self._all.remove(process)
                                self._start()
                        elif process not in self._idle:
                            self._idle.append(process)
                        self._cond.notify_all()
        self._drop(process)

    def _drop(self, process: _Process) -> None:
        with self._cond:
            if process in self._all:
                self._all.remove(process)
            if process in self._idle:
                self._idle.remove(process)
            if process.busy:
                process.busy = False
                self._last_done = time.monotonic()
            self._cond.notify_all()
        with contextlib.suppress(OSError):
            process.channel.sock.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.popen.wait(timeout=5)
