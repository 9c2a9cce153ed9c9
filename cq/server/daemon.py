"""The server process: owns the lock and the socket, answers hellos, hands searches on.

It imports nothing of the search path and runs no search itself (``worker.py`` says why), so
it answers a ``hello`` within milliseconds whatever its searches are doing. Each accepted
connection is checked to come from this user (``SO_PEERCRED``) and served on a thread of its
own: ``status`` and ``stop`` here, a ``search`` handed with its descriptors to an idle search
process (``processes.py``) when the client's process context, read from ``/proc``, is the
server's (``context.py``), or answered ``unserved`` at once (another process context, none
free, or its descriptors did not all come): the client then searches in-process, and a search
never waits here. The client's descriptors are closed here on every path, handed on or not.
Out of descriptors, the server lives on (``serve``). It exits after ``CQ_SERVER_IDLE_S``
seconds with no search (default 900; asking for the status is no use), on ``stop``, on
SIGTERM, or when its socket file is no longer its own (a client replaced it); on the way out
it removes its socket and releases the lock first, so a new server can start while its
search processes finish.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable

import msgspec

from cq.errors import CqError
from cq.server.context import fingerprint, peer_fingerprint, peer_uid
from cq.server.identity import identity
from cq.server.lifecycle import remove_socket, take_lock
from cq.server.memory import measure
from cq.server.messages import ServerStatus
from cq.server.paths import ServerDirError, runtime_dir, shown, socket_path, where
from cq.server.processes import Processes
from cq.server.wire import Channel, LostDescriptors, WireError

# accept() and recvmsg() short of descriptors or memory: the next tick may have them
_SHORT_OF = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
_LOST = (
    "the cq server did not receive this process's standard streams "
    "(it may be out of file descriptors)"
)
_SHORT_OF_FDS = "it is out of file descriptors now; searching without it"
DEFAULT_IDLE_S = 900.0  # hand-set: a working session's pauses, not a day; see README
_TICK_S = 0.5  # how often the accept loop looks at the clock, the stop flag and its socket
_READ_S = 10.0  # a client that connects and sends nothing is dropped after this


class Server:
    def __init__(self, directory: str, idle_limit_s: float) -> None:
        self.path = socket_path(directory)
        self.idle_limit_s = idle_limit_s
        self.ident = identity(directory)
        self.started = time.monotonic()
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.talking = 0  # conversations under way, not yet handed to a search process
        self.processes = Processes()
        self.listener = self._listen()
        self.inode = os.lstat(self.path).st_ino

    def _listen(self) -> socket.socket:
        """Bind beside the final name, then rename: a client never finds a socket file that
        refuses connections because its server has not called ``listen`` yet. The staging
        name is removed on every way out, and those of servers that died before renaming
        theirs are swept (this server holds the lock: no other is binding)."""
        _sweep_staging(self.path)
        staging = f"{self.path}.{os.getpid()}"
        remove_socket(staging, None)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(staging)
            os.chmod(staging, 0o600)
            listener.listen(64)
            os.replace(staging, self.path)
        except BaseException:
            listener.close()
            remove_socket(staging, None)
            raise
        listener.settimeout(_TICK_S)
        return listener

    def serve(self) -> None:
        """Accept until told to stop, idle or replaced. Out of descriptors, the server lives
        on: a spare one kept open is given up to accept the next client and tell it so
        (it searches in-process), then taken again, as servers that must answer every
        client do (a client that hears nothing would take the server for stuck)."""
        self.processes.start_one()  # warm before the first search asks
        spare: int | None = None
        while not self.stopping.is_set() and self._still_mine() and not self._idle_out():
            if spare is None:
                with contextlib.suppress(OSError):
                    spare = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                self.processes.reap()
                continue
            except OSError as exc:
                if exc.errno not in _SHORT_OF:
                    break
                if spare is None:
                    time.sleep(_TICK_S)  # the backlog waits a tick
                    continue
                os.close(spare)
                spare = None
                with contextlib.suppress(OSError):
                    self._start(self.listener.accept()[0], self._turn_away)
                continue
            self._start(conn, self._converse)
        if spare is not None:
            os.close(spare)
        self.listener.close()
        remove_socket(self.path, self.inode)

    def _start(self, conn: socket.socket, target: Callable[[socket.socket], None]) -> None:
        try:
            threading.Thread(target=target, args=(conn,), daemon=True).start()
        except RuntimeError:  # no thread to be had now: the client searches in-process
            conn.close()

    def _turn_away(self, conn: socket.socket) -> None:
        """Answer a client's hello with ``refused``: this server has no descriptor to spare
        for its search now."""
        channel = Channel(conn)
        try:
            conn.settimeout(_READ_S)
            channel.recv()
            channel.send({"kind": "refused", "reason": _SHORT_OF_FDS})
            _drain(conn)
        except (OSError, WireError):
            pass
        finally:
            channel.close()

    def _still_mine(self) -> bool:
        try:
            return os.lstat(self.path).st_ino == self.inode
        except OSError:
            return False

    def _idle_out(self) -> bool:
        """Idle past the limit, with no client in a conversation (one that said hello may be
        about to search). Asking for the status does not count as use: the idle clock runs
        on."""
        with self.lock:
            if self.talking:
                return False
        return self.processes.idle_seconds() > self.idle_limit_s

    def _converse(self, conn: socket.socket) -> None:
        with self.lock:
            self.talking += 1
        channel = Channel(conn)
        fds: list[int] = []
        try:
            conn.settimeout(_READ_S)
            if peer_uid(conn) != os.getuid():
                channel.send({"kind": "refused", "reason": "the cq server serves its own user"})
                _drain(conn)
                return
            message, fds = channel.recv()
            if message is None or message["kind"] != "hello":
                return
            for fd in fds:  # nothing rides with a hello
                os.close(fd)
            fds = []
            own = fingerprint()
            channel.send({"kind": "welcome", "pid": os.getpid(), "context": own, **self.ident})
            try:
                message, fds = channel.recv()
            except LostDescriptors:
                channel.send({"kind": "unserved", "reason": _LOST})
                return
            if message is None:
                return
            if message["kind"] == "search" and peer_fingerprint(conn) != own:
                # the client's own check missed it (it changed since, or it is not cq's): its
                # search would not be the one it runs in-process; it searches itself, silently
                channel.send({"kind": "unserved"})
            elif message["kind"] == "search":
                self._search(channel, message, fds)
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
            channel.close()
            with self.lock:
                self.talking -= 1
            # The accept loop looks at the idle clock only between clients, when the newest
            # one is still talking; clients asking for the status one after another would
            # then keep the server up for ever. So the last one to leave looks as well.
            if self._idle_out():
                self.stopping.set()

    def _search(self, channel: Channel, message: dict[str, object], fds: list[int]) -> None:
        """Hand the search on, or say why not (the client then searches in-process): no free
        process (said with no reason: the client says nothing), or descriptors missing."""
        streams = message.get("streams")
        if not isinstance(streams, list) or len(streams) != len(fds):
            channel.send({"kind": "unserved", "reason": _LOST})
            return
        process = self.processes.hand(message, [channel.sock.fileno(), *fds])
        for fd in fds:  # handed on or not, the client's streams are not held here: a reader
            os.close(fd)  # waiting for their end (``$(cq search ...)``) waits for nobody here
        fds.clear()
        if process is None:
            channel.send({"kind": "unserved", "reason": ""})
            return
        with self.lock:
            self.talking -= 1  # from here the process is busy: that keeps the server up
        try:
            self.processes.watch(process, channel.sock)
        finally:
            with self.lock:
                self.talking += 1

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
            ready=self.processes.ready(),
            busy=self.processes.busy(),
            served=self.processes.served,
            socket=shown(self.path),
            memory=measure(self.processes.pids()),
        )


def _sweep_staging(path: str) -> None:
    """Remove ``server.sock.<pid>`` files whose server is gone (killed between bind and
    rename)."""
    folder, name = os.path.split(path)
    with contextlib.suppress(OSError):
        for entry in os.listdir(folder):
            pid = entry[len(name) + 1 :]
            if entry.startswith(f"{name}.") and pid.isdigit() and not _alive(int(pid)):
                remove_socket(os.path.join(folder, entry), None)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's: not ours to remove
    return True


def _drain(conn: socket.socket) -> None:
    """Close gently: unread input at close would reset the connection and lose the answer."""
    conn.shutdown(socket.SHUT_WR)
    conn.settimeout(1.0)
    with contextlib.suppress(OSError):
        while conn.recv(4096):
            pass


def idle_limit() -> float:
    from cq.env import env_float

    return env_float("CQ_SERVER_IDLE_S", DEFAULT_IDLE_S)


def main() -> None:
    os.chdir("/")
    os.umask(0o077)
    if len(sys.argv) == 3 and tuple(sys.argv[1:]) != where():
        sys.exit(0)  # the runtime dir its spawner used is gone (a logout): nobody asked here
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
