"""``cq server status|start|stop``: look at, start or stop this user's cq server."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys

_HELP = (
    "cq search runs in a per-user background server (started on first use, gone after "
    "CQ_SERVER_IDLE_S seconds idle, default 900; CQ_SERVER=0 never uses it). 'status' says "
    "whether it runs (exit 1 when not), 'start' starts it and waits until it answers, 'stop' "
    "stops it. Each install (a venv, a checkout) and each value of the settings a server "
    "keeps (CQ_CACHE_DIR, CQ_CACHE_MAX_MB, CQ_PYREFLY, CQ_SERVER_IDLE_S, "
    "CQ_SERVER_PROCESS_MAX_MB) has a server of its own; these commands address this one's, "
    "or with --all (status, stop) every one."
)
_START_S = 30.0  # a cold start on a loaded machine imports cq in a fresh interpreter


def add_server_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "server", help="status, start or stop the background server", description=_HELP
    )
    p.add_argument("action", nargs="?", default="status", choices=("status", "start", "stop"))
    p.add_argument(
        "--all",
        action="store_true",
        help="status, stop: every install's server, not only this one's",
    )


def run_server_command(args: argparse.Namespace) -> int:
    from cq.errors import UsageError
    from cq.server.paths import ServerDirError, every_dir, runtime_dir

    if sys.platform != "linux":
        raise UsageError("the cq server runs on Linux only; every search runs in-process")
    if args.all and args.action == "start":
        raise UsageError("--all goes with status or stop")
    try:
        directories = every_dir() if args.all else [runtime_dir()]
    except ServerDirError as exc:
        raise UsageError(f"no cq server: {exc}") from None
    if args.action == "start":
        return _start(directories[0])
    if args.all:  # the directories of servers that ran once: only the running ones
        from cq.server.lifecycle import lock_holder

        directories = [d for d in directories if lock_holder(d) is not None]
    if args.all and not directories:
        print("cq server: none running")
        return 1 if args.action == "status" else 0
    act = _status if args.action == "status" else _stop
    codes = [act(directory) for directory in directories]
    return min(codes) if args.all else codes[0]  # --all status: 0 when any runs


def _ask(directory: str, kind: str) -> dict[str, object] | None:
    """The server's answer to ``kind`` after a hello, with the welcome's process ``context``,
    or None (none runs or it is stuck)."""
    from cq.server.client import hello, open_connection
    from cq.server.paths import socket_path
    from cq.server.wire import Channel, WireError

    try:
        sock = open_connection(socket_path(directory))
    except OSError:
        return None
    try:
        channel = Channel(sock)
        welcome = hello(channel)
        if welcome is None or welcome["kind"] != "welcome":
            return None
        channel.send({"kind": kind})
        answer = channel.recv()[0]
        return None if answer is None else {**answer, "context": welcome.get("context")}
    except (OSError, WireError):
        return None
    finally:
        sock.close()


def _status(directory: str) -> int:
    from cq.server.identity import identity
    from cq.server.lifecycle import lock_holder
    from cq.server.paths import runtime_dir, shown

    status = _ask(directory, "status")
    if status is None:
        holder = lock_holder(directory)
        if holder is None:
            print(f"cq server: not running{_others_running()}")
        elif holder <= 0:  # the kernel's answer in a child pid namespace
            print("cq server: a process not visible from here holds the lock but does not answer")
        else:
            print(f"cq server: pid {holder} holds the lock but does not answer")
        return 1
    mine = identity()
    same = all(status[k] == v for k, v in mine.items())
    ours = os.path.dirname(str(status["socket"])) == shown(runtime_dir())
    print(
        f"cq server: running, pid {status['pid']}, up {status['up_s']:g} s, "
        f"idle {status['idle_s']:g} s (exits after {status['idle_limit_s']:g} s idle)"
    )
    processes, served = status["processes"], status["served"]
    print(
        f"  {processes} search process{'es' if processes != 1 else ''}, {status['busy']} busy; "
        f"{served} search{'es' if served != 1 else ''} served"
    )
    memory = status.get("memory")
    if isinstance(memory, dict):
        parts = (memory["daemon"], memory["workers"], memory["pyrefly"])
        print(
            f"  memory: {_mb(sum(parts))} (daemon {_mb(parts[0])}, search processes "
            f"{_mb(parts[1])}, Pyrefly {_mb(parts[2])})"
        )
    print(f"  socket: {status['socket']}")
    if not same and ours:
        print("  another cq version, code or settings than this one: the next search replaces it")
    elif not ours:
        print("  another install's or settings' server (its own searches use it)")
    else:
        _say_if_other_context(status)
    return 0


def _others_running() -> str:
    """What to add to "not running" when servers of other installs or settings run in the
    same runtime dir (this one's holds no lock, so each holder is another's): a user who
    changed a setting (CQ_CACHE_DIR, XDG_CACHE_HOME) between starting one and asking would
    otherwise think none runs."""
    from cq.server.lifecycle import lock_holder
    from cq.server.paths import ServerDirError, every_dir

    try:
        n = sum(lock_holder(d) is not None for d in every_dir())
    except (OSError, ServerDirError):
        return ""
    if not n:
        return ""
    runs = (
        "1 server of another install or other settings runs"
        if n == 1
        else (f"{n} servers of other installs or settings run")
    )
    return f" (for this install and settings; {runs}: 'cq server status --all')"


def _stop(directory: str) -> int:
    """Ask the server to stop; signal it only when it did not, and only a pid checked to be
    the cq server's (``server_pid``: never 0, never a pid this process cannot see)."""
    from cq.server.lifecycle import lock_holder, server_pid, wait_for

    holder = lock_holder(directory)
    answer = _ask(directory, "stop")
    if answer is None and holder is None:
        print("cq server: not running")
        return 0
    gone = wait_for(lambda: lock_holder(directory) is None, 10.0)
    pid = server_pid(directory)
    if not gone and pid is None:
        print(
            f"cq: the cq server (holding {directory}) did not stop, and its process is not "
            "visible from here to be signalled",
            file=sys.stderr,
        )
        return 2
    if not gone and pid is not None:  # stuck: it did not take the stop
        for signum in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(OSError):
                os.kill(pid, signum)
            if wait_for(lambda: lock_holder(directory) is None, 3.0):
                break
    print(f"cq server: stopped (pid {answer['pid'] if answer else holder})")
    return 0


def _start(directory: str) -> int:
    """Start one (at most one spawn: polling must not start more) and wait until it answers."""
    from cq.server.client import connect
    from cq.server.identity import identity
    from cq.server.lifecycle import wait_for

    channel, _ = connect(directory, searching=False)
    if channel is not None:
        channel.sock.close()
    mine = identity()
    found: list[dict[str, object]] = []

    def answers() -> bool:
        status = _ask(directory, "status")
        same = status is not None and all(status[k] == v for k, v in mine.items())
        # a search process is ready, or one already searches, or none is left: a server
        # ends its search processes idle for a minute (``memory.WORKER_IDLE_S``) and starts
        # one with the next search; a starting server has one from its first status on
        warm = status is not None and (
            status.get("ready", 1) or status.get("busy") or not status.get("processes", 1)
        )
        if same and warm:
            found.append(status)
        return bool(found)

    if not wait_for(answers, _START_S):
        print(f"cq: the cq server did not start within {_START_S:g} s", file=sys.stderr)
        return 2
    print(f"cq server: running, pid {found[0]['pid']}")
    _say_if_other_context(found[0])
    return 0


def _say_if_other_context(status: dict[str, object]) -> None:
    from cq.server.context import fingerprint

    if status["context"] != fingerprint():
        print(
            "  another process context than this one (namespaces, groups, limits or nice): "
            "searches from here run in-process"
        )


def _mb(size: int) -> str:
    return f"{size / (1 << 20):.0f} MB"
