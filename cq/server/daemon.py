"""The server process: owns the lock and the socket, answers hellos, hands searches on.

It imports nothing of the search path and runs no search itself (``worker.py`` says why), so
it answers a ``hello`` within milliseconds whatever its searches are doing. Each accepted
connection is checked to come from this user (``SO_PEERCRED``) and served on a thread of its
own: ``status`` and ``stop`` here, a ``search`` handed with its descriptors to an idle search
process (``processes.py``). It exits after ``CQ_SERVER_IDLE_S`` seconds with no search
(default 900), on ``stop``, on SIGTERM, or when its socket file is no longer its own (a client
replaced it); on the way out it removes its socket and releases the lock first, so a new
server can start while its search processes finish.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import struct
import sys
import threading
import time

import msgspec

from cq.errors import CqError
from cq.server.identity import identity
from cq.server.lifecycle import remove_socket, take_lock
from cq.server.memory import measure
from cq.server.messages import ServerStatus
from cq.server.paths import ServerDirError, runtime_dir, socket_path
from cq.server.processes import Processes
from cq.server.wire import Channel, WireError

DEFAULT_IDLE_S = 900.0  # hand-set: a working session's pauses, not a day; see README
_TICK_S = 0.5  # how often the accept loop looks at the clock, the stop flag and its socket
_READ_S = 10.0  # a client that connects and sends nothing is dropped after this


class Server:
    def __init__(self, directory: str, idle_limit_s: float) -> None:
        self.path = socket_path(directory)
        self.idle_limit_s = idle_limit_s
        self.ident = identity()
        self.started = time.monotonic()
        self.stopping = threading.Event()
        self.processes = Processes()
        self.listener = self._listen()
        self.inode = os.lstat(self.path).st_ino

    def _listen(self) -> socket.socket:
        """Bind beside the final name, then rename: a client never finds a socket file that
        refuses connections because its server has not called ``listen`` yet."""
        staging = f"{self.path}.{os.getpid()}"
        remove_socket(staging, None)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(staging)
        os.chmod(staging, 0o600)
        listener.listen(64)
        os.replace(staging, self.path)
        listener.settimeout(_TICK_S)
        return listener

    def serve(self) -> None:
        self.processes.start_one()  # warm before the first search asks
        while not self.stopping.is_set() and self._still_mine() and not self._idle_out():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                self.processes.reap()
                continue
            except OSError:
                break
            threading.Thread(target=self._converse, args=(conn,), daemon=True).start()
        self.listener.close()
        remove_socket(self.path, self.inode)

    def _still_mine(self) -> bool:
        try:
            return os.lstat(self.path).st_ino == self.inode
        except OSError:
            return False

    def _idle_out(self) -> bool:
        return self.processes.idle_seconds() > self.idle_limit_s

    def _converse(self, conn: socket.socket) -> None:
        channel = Channel(conn)
        fds: list[int] = []
        try:
            conn.settimeout(_READ_S)
            if _peer_uid(conn) != os.getuid():
                channel.send({"kind": "refused", "reason": "the cq server serves its own user"})
                _drain(conn)
                return
            message, fds = channel.recv()
            if message is None or message["kind"] != "hello":
                return
            self.processes.touch()
            channel.send({"kind": "welcome", "pid": os.getpid(), **self.ident})
            message, fds = channel.recv()
            if message is None:
                return
            if message["kind"] == "search":
                conn.settimeout(None)
                self.processes.hand(message, [conn.fileno(), *fds])
            elif message["kind"] == "status":
                channel.send(msgspec.to_builtins(self._status()))
            elif message["kind"] == "stop":
                channel.send({"kind": "stopping", "pid": os.getpid()})
                self.stopping.set()
        except (OSError, WireError):
            pass
        finally:
            for fd in fds:  # a search process has its own copies of what was handed on
                with contextlib.suppress(OSError):
                    os.close(fd)
            conn.close()

    def _status(self) -> ServerStatus:
        return ServerStatus(
            pid=os.getpid(),
            version=self.ident["version"],
            code=self.ident["code"],
            settings=self.ident["settings"],
            up_s=round(time.monotonic() - self.started, 1),
            idle_s=round(self.processes.idle_seconds(), 1),
            idle_limit_s=self.idle_limit_s,
            processes=self.processes.count(),
            busy=self.processes.busy(),
            served=self.processes.served,
            socket=self.path,
            memory=measure(self.processes.pids()),
        )


def _drain(conn: socket.socket) -> None:
    """Close gently: unread input at close would reset the connection and lose the answer."""
    conn.shutdown(socket.SHUT_WR)
    conn.settimeout(1.0)
    with contextlib.suppress(OSError):
        while conn.recv(4096):
            pass


def _peer_uid(conn: socket.socket) -> int:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def idle_limit() -> float:
    from cq.env import env_float

    return env_float("CQ_SERVER_IDLE_S", DEFAULT_IDLE_S)


def main() -> None:
    os.chdir("/")
    os.umask(0o077)
    try:
        directory = runtime_dir()
        limit = idle_limit()
    except (ServerDirError, CqError):  # nothing to report to: the client searches without it
        sys.exit(1)
    lock = take_lock(directory)
    if lock is None:
        return  # another server runs, or is starting
    server = Server(directory, limit)
    signal.signal(signal.SIGTERM, lambda *_: server.stopping.set())
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        server.serve()
    finally:
        with contextlib.suppress(OSError):
            os.close(lock)  # released before the search processes wind down
        server.processes.close()


if __name__ == "__main__":
    main()
