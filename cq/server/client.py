"""The thin client: ``cq search`` through the user's server, or None to search in-process.

``run_through_server(argv)`` returns the exit code of a search the server ran, or None when
this process must search itself: the server is off (``CQ_SERVER=0``), not running yet (one is
started in the background once this search has run, ``start_wanted``: a command line cq
refuses starts none), of another cq or other settings (it is told to stop and a new one is
started), or broken. A broken server is said
once, by the client that finds it, in one ``cq: ...`` line on stderr; that client also
replaces it, so the next search finds a healthy one:

- dead: its socket file is left but nobody holds the lock or accepts (a killed server);
- stuck: it accepts but does not answer a ``hello`` within ``HELLO_TIMEOUT_S`` (its process
  is killed when it holds the server lock: a hung server of this user's);
- gone before the search started (the connection closed without a ``started``).

A server of this cq whose process context is not this process's (``context.py``: another
mount or network namespace, other groups, limits or niceness) is left alone and this process
searches in-process without a word: the answer is the one it would have had. A socket
answered by another user (``SO_PEERCRED``, checked before anything is sent) is refused and
said; the runtime dir is reached through the descriptor it was checked on (``paths.py``).

Help (``-h``) and everything but ``search`` run in-process: they are not latency-bound, and
argparse sizes help text by the terminal of its own process.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
from collections.abc import Callable, Sequence

from cq.server import context, conversation, lifecycle
from cq.server.identity import identity
from cq.server.paths import ServerDirError, runtime_dir, shown, socket_path
from cq.server.wire import Channel, WireError

# The server answers a hello from a thread that does nothing else (milliseconds); on a
# loaded machine that thread may wait for a core, so the bound is generous.
HELLO_TIMEOUT_S = 2.0
_OFF = ("0", "off", "false", "no")


def server_wanted(argv: Sequence[str]) -> bool:
    """Whether this command line goes to the server at all."""
    if os.environ.get("CQ_SERVER", "").strip().lower() in _OFF or sys.platform != "linux":
        return False
    if not argv or argv[0] != "search" or "-h" in argv or "--help" in argv:
        return False
    if os.environ.get("CQ_SERVER_IDLE_S"):  # checked only when set: cq.env costs msgspec
        from cq.env import env_float
        from cq.errors import UsageError

        try:
            env_float("CQ_SERVER_IDLE_S", 0.0)
        except UsageError:
            return False  # the in-process search reports the bad value
    return True


class ForeignServer(OSError):
    """The server's socket is answered by a process of another user."""


def run_through_server(argv: Sequence[str]) -> int | None:
    if not server_wanted(argv) or not context.servable():
        return None
    try:
        directory = runtime_dir()
    except ServerDirError as exc:
        _note(f"not using the cq server: {exc}")
        return None
    try:
        channel, welcome = connect(directory)
        if channel is None or welcome is None:
            return None
        try:
            return _search(channel, list(argv))
        finally:
            channel.sock.close()
    except KeyboardInterrupt:
        return 130  # as an in-process search interrupted that early
    except (OSError, WireError) as exc:
        _note(f"the cq server failed ({exc}); searching without it")
        return None


_wanted = False  # a server to start once this process's search is over (``_start``)


def _start(searching: bool) -> None:
    """Start a server: now for ``cq server start``; for a search that found none, once the
    search is over and only if it ran (``start_wanted``): a mistyped command line (no query,
    an unknown flag, a bad value) starts no server. Its interpreter waits for this process
    to exit either way (``lifecycle.spawn``'s ``after_me``), so the later fork costs the
    next search nothing."""
    global _wanted
    if searching:
        _wanted = True
    else:
        lifecycle.spawn()


def start_wanted(code: int) -> None:
    """The server a search that found none wanted, started now that it has ended with
    ``code``: 0 (results) or 1 (none) start it; an error (2) or an interrupt does not."""
    global _wanted
    if _wanted and code in (0, 1):
        _wanted = False
        lifecycle.spawn(after_me=True)


def connect(
    directory: str, *, searching: bool = True
) -> tuple[Channel | None, dict[str, object] | None]:
    """A connection to a healthy server of this cq, after its ``welcome``; else ``(None,
    None)`` having dealt with what was found: none (one is started), old (replaced), broken
    (said, and replaced), on its way out (left alone: the next search starts one).
    ``searching``: this process searches in-process when no server answers, and a server it
    starts is started once that search has run (``_start``); ``cq server start`` waits for
    it."""
    path = socket_path(directory)
    try:
        inode: int | None = os.lstat(path).st_ino
    except OSError:
        inode = None
    try:
        sock = open_connection(path)
    except ForeignServer as exc:
        _note(f"{exc}; searching without it")
        return None, None
    except (FileNotFoundError, ConnectionRefusedError):
        if inode is not None and lifecycle.lock_holder(directory) is None:
            _note("the cq server is gone (its socket was left behind); searching without it")
            lifecycle.remove_socket(path, inode)
        elif inode is not None:
            return None, None  # a server is on its way out; the next search starts one
        if lifecycle.lock_holder(directory) is None:
            _start(searching)
        return None, None
    except TimeoutError:
        _replace_stuck(directory, path, inode, searching)
        return None, None
    except OSError as exc:
        where = shown(path)
        _note(f"cannot reach the cq server at {where}: {exc.strerror or exc}; searching without it")
        return None, None
    channel = Channel(sock)
    mine: list[str] = []  # this process's context, read while the server reads its own
    welcome = hello(channel, lambda: mine.append(context.fingerprint()))
    if welcome is None:
        sock.close()
        _replace_stuck(directory, path, inode, searching)
        return None, None
    if welcome["kind"] == "refused":
        sock.close()
        _note(f"the cq server refused this process: {welcome.get('reason', '')}")
        return None, None
    if any(welcome.get(k) != v for k, v in identity(directory).items()):
        _retire(channel, directory)
        _start(searching)
        return None, None
    if welcome.get("context") != mine[0]:
        sock.close()  # a server for another context, not a broken one: left as it is
        return None, None
    return channel, welcome


def open_connection(path: str) -> socket.socket:
    """A connection to the socket at ``path``, made only when the process answering it is
    this user's: ``ForeignServer`` otherwise, before a byte is sent."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(HELLO_TIMEOUT_S)  # a full backlog (a stopped server) blocks a connect
    try:
        sock.connect(path)
        uid = context.peer_uid(sock)
        if uid != os.getuid():
            raise ForeignServer(f"the cq server's socket {shown(path)} is answered by uid {uid}")
    except BaseException:
        sock.close()
        raise
    return sock


def hello(
    channel: Channel, meanwhile: Callable[[], object] | None = None
) -> dict[str, object] | None:
    """The server's ``welcome`` (or ``refused``), None when it does not answer in time;
    ``meanwhile`` runs while the server prepares its answer."""
    channel.sock.settimeout(HELLO_TIMEOUT_S)
    try:
        channel.send({"kind": "hello"})
        if meanwhile is not None:
            meanwhile()
        reply, _ = channel.recv()
    except (OSError, WireError):
        return None
    return reply if reply is not None and reply["kind"] in ("welcome", "refused") else None


def _replace_stuck(directory: str, path: str, inode: int | None, searching: bool) -> None:
    holder = lifecycle.server_pid(directory)
    where = f" (pid {holder})" if holder else ""
    _note(
        f"the cq server{where} did not answer within {HELLO_TIMEOUT_S:g} s; "
        "searching without it and starting a new one"
    )
    if holder:
        with contextlib.suppress(OSError):
            os.kill(holder, signal.SIGKILL)
        lifecycle.wait_for(lambda: lifecycle.lock_holder(directory) is None, 2.0)
    lifecycle.remove_socket(path, inode)
    _start(searching)


def _retire(channel: Channel, directory: str) -> None:
    """Tell a server of another cq or other settings to stop, and wait until it let go."""
    with contextlib.suppress(OSError, WireError):
        channel.send({"kind": "stop"})
        channel.recv()
    channel.sock.close()
    lifecycle.wait_for(lambda: lifecycle.lock_holder(directory) is None, 3.0)


def _search(channel: Channel, argv: list[str]) -> int | None:
    streams, fds = _stdio()
    previous_umask = os.umask(0o022)
    os.umask(previous_umask)
    try:
        cwd = os.getcwd()
    except OSError:
        return None  # the in-process search reports it
    message = {"kind": "search", "argv": argv, "env": dict(os.environ), "cwd": cwd}
    message |= {"umask": previous_umask, "streams": streams}
    return conversation.search(channel, message, fds)


def _stdio() -> tuple[list[dict[str, object]], list[int]]:
    """The standard streams this process has, described for the server, and their fds."""
    streams: list[dict[str, object]] = []
    fds: list[int] = []
    for fd, stream in ((0, sys.stdin), (1, sys.stdout), (2, sys.stderr)):
        if stream is None:
            continue
        try:
            os.fstat(fd)
        except OSError:
            continue
        line_buffering = bool(getattr(stream, "line_buffering", False))
        streams.append(
            {
                "fd": fd,
                "encoding": stream.encoding,
                "errors": stream.errors,
                "line_buffering": line_buffering,
            }
        )
        fds.append(fd)
    return streams, fds


def _note(text: str) -> None:
    print(f"cq: {text}", file=sys.stderr)
    sys.stderr.flush()
