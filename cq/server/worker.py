"""A search process of the cq server: runs one client's search at a time, as the client would.

Why the process, not the server itself, runs searches: a step in C can hold the interpreter
lock for seconds, and the server must answer every ``hello`` at once (a client that hears
nothing takes the server for stuck). The process keeps its warm state (``warm.py``) between
searches and replaces, for the length of one search only, what a search reads from its process:
the environment (``os.environ``, read deep in cq: ``cq.env``, the cache dir, rg's config),
the working directory, the umask, and ``sys.stdin``/``stdout``/``stderr``, opened on the
client's own descriptors with the client's encodings. So output goes straight to the client's
terminal or file, ``isatty`` answers for the client's stream, ``-`` reads the client's stdin;
what goes to a pipe or socket the client writes itself (``relay.py``: a reader that does not
read never blocks this process), and a closed reader ends the search there as in-process.
Each search runs on the main thread, as in a one-shot ``cq``; a ``cancel`` from the client,
or its end of input, is delivered as SIGINT to that thread, which is what ^C does to an
in-process search.

Started by the server as ``python -m cq.server.worker FD`` with its end of a socket pair; it
says ``ready`` there once warm (no search is handed to it before), and end of input there
means the server is gone, and the process exits. A search frame whose descriptors do not
match its streams is dropped, its descriptors closed; a stream the client has closed is
``/dev/null`` here, as in an in-process search.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import socket
import sys
import threading
import traceback
from collections.abc import Iterator

import msgspec

from cq.server.memory import WORKER_MAX_ROOTS, rss, worker_max_rss
from cq.server.messages import Search, Stream
from cq.server.relay import RelayOut, relayed
from cq.server.wire import Channel, LostDescriptors, WireError

# The client answers ``started`` with ``go`` at once; one that has not within this long
# went away (or is stopped) and will search in-process, if at all.
_GO_S = 10.0


def main() -> None:
    control = Channel(socket.socket(fileno=int(sys.argv[1])))
    searching = threading.Event()
    from cq.search import search_parser
    from cq.server.warm import search_begins, warm_between, warm_process

    warm_process(searching)
    search_parser()  # imports the option table and the flags built from it
    os.chdir("/")  # between searches the process holds no directory of anyone's
    control.send({"kind": "ready"})
    roots: set[str] = set()
    while True:
        try:
            message, fds = control.recv()
        except LostDescriptors:  # out of descriptors here: the client, without its
            control.send({"kind": "done"})  # connection, searches in-process
            continue
        if message is None:
            break
        search_begins(searching)
        try:
            search = msgspec.convert(message, Search)
        except msgspec.ValidationError:  # a malformed frame: drop it, keep serving
            search = None
        if search is None or len(fds) != len(search.streams) + 1:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
        else:
            roots.update(_serve(search, fds))
        retire = len(roots) >= WORKER_MAX_ROOTS or rss(os.getpid()) > worker_max_rss()
        control.send({"kind": "done", "retire": retire})
        _start_embedding_builds()
        if retire:  # its memory goes back with it; the server starts a fresh one
            break
        warm_between(searching)


def _start_embedding_builds() -> None:
    """Start the dense signal's builds the search asked for (``cq.embed.background``), once
    it is answered; a search that asked none never imported that module."""
    background = sys.modules.get("cq.embed.background")
    if background is not None:
        with contextlib.suppress(Exception):  # a build not started now is asked again next time
            background.start_wanted()


def _serve(search: Search, fds: list[int]) -> set[str]:
    """Answer ``started``, run the search on the client's streams once the client says ``go``,
    answer ``exit``; the root it searched, as written (only counted, to recycle a process that
    served many: ``memory.WORKER_MAX_ROOTS``), or none when it never ran or its command line
    did not parse. The ``go`` makes the hand-over one decision: a client that gave up
    waiting searches in-process and never says it, and then nothing is written here.
    ``started`` carries this process's pidfd: the client stops and continues the search
    with it (^Z, ``fg``) whatever pid namespace it sees."""
    client = Channel(socket.socket(fileno=fds[0]))
    roots: set[str] = set()
    try:
        _started(client)
        client.sock.settimeout(_GO_S)
        go, _ = client.recv()
        client.sock.settimeout(None)
        if go is None or go["kind"] != "go":
            return roots
        guard = _Interrupt(fds[1:])
        watcher = threading.Thread(target=guard.watch, args=(client,), daemon=True)
        watcher.start()
        code = _run(search, fds[1:], guard, client, roots)
        with contextlib.suppress(OSError):
            client.send({"kind": "exit", "code": code})
        with contextlib.suppress(OSError):
            client.sock.shutdown(socket.SHUT_RDWR)  # wakes the watcher with end of input
        watcher.join(timeout=5)
    except (OSError, WireError):  # the client went away before its search started
        pass
    finally:
        client.close()
        for fd in fds[1:]:
            with contextlib.suppress(OSError):
                os.close(fd)
    return roots


def _started(client: Channel) -> None:
    try:
        pidfd = os.pidfd_open(os.getpid())
    except OSError:  # a kernel without pidfds: the client cannot pass ^Z on
        client.send({"kind": "started", "pid": os.getpid()})
        return
    try:
        client.send({"kind": "started", "pid": os.getpid()}, [pidfd])
    finally:
        os.close(pidfd)


class _Interrupt:
    """Turns the client's ``cancel`` (or its going away) into SIGINT, while a search runs.

    The interrupted search lets go of the client's streams at once: each descriptor is
    pointed at ``/dev/null`` before the SIGINT, so a reader of the client's pipe (``$(cq
    search ...)``, a test's ``communicate``) sees its end when the client exits with 130,
    not when the search has unwound its pool, and what the search still writes goes
    nowhere. The numbers stay open, so its streams close as usual."""

    def __init__(self, streams: list[int]) -> None:
        self.lock = threading.Lock()
        self.running = False
        self.cancelled = False  # a cancel that came before the search started is kept
        self.streams = streams

    def watch(self, client: Channel) -> None:
        with contextlib.suppress(OSError, WireError):
            while (message := client.recv()[0]) is not None and message["kind"] != "cancel":
                pass
        with self.lock:
            self.cancelled = True
            if self.running:
                _let_go(self.streams)
                signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    def start(self) -> None:
        """The search begins: from now on a cancel interrupts it; one that came already
        interrupts it at once."""
        with self.lock:
            if self.cancelled:
                raise KeyboardInterrupt
            self.running = True


def _let_go(fds: list[int]) -> None:
    """``fds`` pointed at ``/dev/null``: the client's pipes or terminal no longer held here."""
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.dup2(null, fd, inheritable=False)
    finally:
        os.close(null)


def _run(
    search: Search, fds: list[int], guard: _Interrupt, client: Channel, roots: set[str]
) -> int:
    """The search's exit code: its words parsed (``search.argv`` begins with ``search``, the
    only command the client hands over) and run by ``cq.search``, as ``cq search`` runs them
    in-process; the root it names added to ``roots``."""
    from cq.search import exit_code, parse_search, run_search_args
    from cq.terminal import forget_warnings

    def parsed_and_run() -> int:
        args = parse_search(search.argv[1:])
        roots.add(os.path.join(search.cwd, args.root or search.env.get("CQ_ROOT") or "."))
        return run_search_args(args)

    _forget_tool_lookups()
    forget_warnings()  # its warnings said, even those an earlier search said

    try:
        with _request_scope(search, fds, client):
            guard.start()
            try:
                code = exit_code(parsed_and_run)
                sys.stdout.flush()
            finally:
                with guard.lock:
                    guard.running = False
            return code
    except KeyboardInterrupt:  # a cancel that landed outside the search's own handler
        return 130
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BrokenPipeError:
        return 0
    except BaseException:  # as an uncaught exception in the client's process would: exit 1
        with _request_scope(search, fds, client):
            traceback.print_exc()
        return 1


def _forget_tool_lookups() -> None:
    """``cq.tools`` finds programs (rg, cq's own script) from ``CQ_RG`` and ``PATH`` and
    caches the answer for its process: here each search finds them from its own environment,
    as its own process would."""
    import cq.tools

    for value in vars(cq.tools).values():
        if getattr(value, "__module__", None) == "cq.tools" and hasattr(value, "cache_clear"):
            value.cache_clear()


@contextlib.contextmanager
def _request_scope(search: Search, fds: list[int], client: Channel) -> Iterator[None]:
    """The client's environment, directory, umask and streams, for this search only."""
    saved_env = dict(os.environ)
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_umask = os.umask(search.umask)
    streams: dict[int, io.TextIOWrapper | None] = {0: None, 1: None, 2: None}
    try:
        os.environ.clear()
        os.environ.update(search.env)
        for stream, fd in zip(search.streams, fds, strict=True):
            streams[stream.fd] = _open(stream, fd, client)
        for number in (1, 2):  # closed in the client (``2>&-``); a closed stdin stays None
            if streams[number] is None:
                streams[number] = _null()
        sys.stdin, sys.stdout, sys.stderr = streams[0], streams[1], streams[2]
        os.chdir(search.cwd)
        yield
    finally:
        for opened in streams.values():  # closed before their descriptors are: a flush at
            if opened is not None:  # collection time must never hit a reused descriptor
                with contextlib.suppress(OSError, ValueError):
                    opened.close()
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.environ.clear()
        os.environ.update(saved_env)
        os.umask(saved_umask)
        os.chdir("/")


def _null() -> io.TextIOWrapper:
    """``/dev/null`` for an output stream the client has closed, as ``cq.cli`` makes stderr
    for an in-process search: no ``print(file=sys.stderr)`` lands on stdout."""
    return open(os.devnull, "w", encoding="utf-8")


def _open(stream: Stream, fd: int, client: Channel) -> io.TextIOWrapper:
    """A text stream on the client's descriptor, set up as the client's Python had it; on a
    pipe or socket the client writes what is written here (``relay.py`` says why)."""
    if stream.fd != 0 and relayed(fd):
        return io.TextIOWrapper(
            io.BufferedWriter(RelayOut(client, stream.fd, fd)),
            encoding=stream.encoding,
            errors=stream.errors,
            line_buffering=stream.line_buffering,
        )
    return open(
        fd,
        "r" if stream.fd == 0 else "w",
        buffering=1 if stream.line_buffering and stream.fd != 0 else -1,
        encoding=stream.encoding,
        errors=stream.errors,
        closefd=False,
    )


if __name__ == "__main__":
    main()
