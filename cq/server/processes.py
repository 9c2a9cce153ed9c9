"""The server's search processes: one started with the server, a second for an overlap.

A search goes to an idle process; when all are busy a new one starts, up to
``MAX_PROCESSES``; past that the search waits for the first one free. Each process keeps its
own warm state (imports, caches, Pyrefly servers), so a second one only pays off when searches
overlap. A process that dies is dropped (its client sees the connection close) and the next
search starts another. Memory goes back (``memory.py``): a process that says it retires with
its ``done`` (past its size or roots bound) is replaced at once by a fresh one, and one idle
for ``memory.WORKER_IDLE_S`` is ended (``reap``) while the daemon stays. ``close`` ends them:
end of input first (an idle one exits at once, a busy one after its search), then SIGTERM,
then SIGKILL.
"""

from __future__ import annotations

import contextlib
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


class _Process:
    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "cq.server.worker", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
        )
        theirs.close()
        self.channel = Channel(ours)
        self.busy = False
        self.idle_since = time.monotonic()


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
                self._idle.append(self._start())

    def hand(self, message: dict[str, Any], fds: list[int]) -> None:
        """Give a search and its descriptors to a free process (waiting for one if need be)."""
        for _ in range(2):  # a process that died idle is noticed here; the next one serves
            process = self._acquire()
            try:
                process.channel.send(message, fds)
                with self._cond:
                    self.served += 1  # counted when handed on: a client sees it at once
                return
            except OSError:
                self._drop(process)
        raise OSError("no search process could take the search")

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

    def touch(self) -> None:
        """A client came: the idle clock starts again (it may be about to search)."""
        with self._cond:
            self._last_done = time.monotonic()

    def idle_seconds(self) -> float:
        with self._cond:
            if any(p.busy for p in self._all):
                return 0.0
            return time.monotonic() - self._last_done

    def count(self) -> int:
        with self._cond:
            return len(self._all)

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

    def _start(self) -> _Process:
        process = _Process()
        self._all.append(process)
        threading.Thread(target=self._follow, args=(process,), daemon=True).start()
        return process

    def _acquire(self) -> _Process:
        with self._cond:
            while True:
                if self._idle:
                    process = self._idle.pop()
                    break
                if len(self._all) < MAX_PROCESSES:
                    process = self._start()
                    break
                self._cond.wait()
            process.busy = True
            return process

    def _follow(self, process: _Process) -> None:
        """Read the process's ``done``s; its end of output means it is gone."""
        with contextlib.suppress(OSError, WireError):
            while (message := process.channel.recv()[0]) is not None:
                if message["kind"] == "done":
                    with self._cond:
                        process.busy = False
                        process.idle_since = self._last_done = time.monotonic()
                        if not message.get("retire"):
                            self._idle.append(process)
                        elif process in self._all:  # it exits now; a fresh one is warm at once
                            self._all.remove(process)
                            self._idle.append(self._start())
                        self._cond.notify()
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
            self._cond.notify()
        with contextlib.suppress(OSError):
            process.channel.sock.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.popen.wait(timeout=5)
