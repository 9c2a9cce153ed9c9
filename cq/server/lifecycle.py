"""Start the server, find out who holds its lock, and wait for it to come or go.

The lock (``server.lock``, a POSIX record lock) is held by the one live server for its whole
life, so two clients starting one at once make one server: the second to start finds the
lock taken and exits. Its holder's pid comes from the kernel (``F_GETLK``), not from a pid
file a crash could leave stale. Standard library only (the client imports it).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import struct
import sys
import time
from collections.abc import Callable

from cq.server.paths import lock_path, where

# struct flock on Linux: l_type, l_whence, then l_start, l_len (off_t), l_pid; native layout.
_FLOCK = "hhqqi"
# Hand-set: longer than a first search on a large tree takes; a longer one (an audit) should
# not keep the searches after it from a server.
AFTER_CLIENT_S = 10.0


def lock_holder(directory: str) -> int | None:
    """The pid of the process holding the server lock (the server), else None."""
    try:
        fd = os.open(lock_path(directory), os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        query = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        kind, _, _, _, pid = struct.unpack(_FLOCK, fcntl.fcntl(fd, fcntl.F_GETLK, query))
    except OSError:
        return None
    finally:
        os.close(fd)
    return None if kind == fcntl.F_UNLCK else pid


def server_pid(directory: str) -> int | None:
    """The lock holder's pid when it may be signalled: a pid this process can see (in a child
    pid namespace the kernel reports an unseen holder as 0, and ``kill(0)`` would signal the
    caller's own process group) whose command line is a cq server's. Else None."""
    pid = lock_holder(directory)
    if pid is None or pid <= 0:
        return None
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")
    except OSError:
        return None
    return pid if b"cq.server.daemon" in argv else None


def take_lock(directory: str) -> int | None:
    """The lock's descriptor, now held by this process; None when another process holds it."""
    fd = os.open(lock_path(directory), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def spawn(*, after_me: bool = False) -> None:
    """Start a server detached from this process: fork, new session, fork again, and exec a
    fresh interpreter with stdio on /dev/null in ``/``. Returns at once (the first fork's
    child exits right after the second fork and is reaped here); the server itself takes the
    lock or, finding it held, exits.

    ``after_me``: the server's interpreter starts once this process has exited (at most
    ``AFTER_CLIENT_S`` later). A search that starts the server searches in-process beside it,
    and the server's start (its interpreter, then a search process importing the search
    path) would take the core that search's forked helpers use, for a server that search is
    not answered by. The price: a search issued the moment this one ends finds no server
    ready and searches in-process beside its start (figures:
    bench/results/2026-11-29-speed5/README.md). A runtime dir gone meanwhile (a logout)
    starts none: the server would settle elsewhere, where nobody asked for one."""
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH")) if p)
    here = where()  # the server settles there or nowhere (``daemon.main``)
    argv = [sys.executable, "-m", "cq.server.daemon", *here]
    me = _pidfd() if after_me else None
    try:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the forked children
            try:
                os.setsid()
                if os.fork() == 0:
                    devnull = os.open(os.devnull, os.O_RDWR)
                    for target in (0, 1, 2):
                        os.dup2(devnull, target)
                    os.chdir("/")
                    if me is not None:  # nothing of this process's held while waiting
                        os.closerange(3, me)
                        os.closerange(me + 1, os.sysconf("SC_OPEN_MAX"))
                        _wait_for_exit(me, AFTER_CLIENT_S)
                    os.execve(sys.executable, argv, env)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
    finally:
        if me is not None:
            os.close(me)


def _pidfd() -> int | None:
    """A descriptor of this process that polls readable once it has exited (None where the
    kernel has none): opened here, so the waiting child cannot watch a reused pid."""
    try:
        return os.pidfd_open(os.getpid())
    except (AttributeError, OSError):
        return None


def _wait_for_exit(pidfd: int, timeout: float) -> None:
    """Wait until the process behind ``pidfd`` has exited, or ``timeout`` seconds."""
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    with contextlib.suppress(OSError):
        poller.poll(int(timeout * 1000))
    os.close(pidfd)


def wait_for(condition: Callable[[], bool], timeout: float) -> bool:
    """Poll ``condition()`` until it is true or ``timeout`` seconds passed."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def remove_socket(path: str, inode: int | None) -> None:
    """Unlink the socket file if it is still the one seen (``inode``; None: any)."""
    with contextlib.suppress(OSError):
        if inode is None or os.lstat(path).st_ino == inode:
            os.unlink(path)
