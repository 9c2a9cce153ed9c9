"""The server never wedges a search and never goes silent: busy, stopped or unread search
processes hold back no other search; a client's pipes are let go on every path; descriptors
that did not come are said; running out of descriptors is transient; signals reach the
search; ``cq server stop`` signals nothing it cannot see; status tells the real idle time
without keeping the server up; staging sockets do not pile up; a closed stderr is handled.
Real servers, real clients, real pipes; each test has its own runtime dir (``runtime``) and
stops what it started. No durations are asserted: waits are generous deadlines that only
catch a hang. Linux only."""

from __future__ import annotations

import contextlib
import os
import resource
import select
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import test_server
from conftest import CqRun, run_cq, write_tree
from test_server import (
    _alive,
    _children,
    _dir,
    _env,
    _frame,
    _read_frame,
    _report,
    _said_hello,
    _served,
    _start,
    _status,
)

from cq.server.lifecycle import lock_holder

# test_server's fixtures (a tree, a private runtime dir), found by pytest in this module too
repo, runtime = test_server.repo, test_server.runtime

# run_cq: the client's CLI forked (forked_cli.py), the server the real daemon it starts
pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="the server is Linux only"),
    pytest.mark.cli_forked,
]

HANG_S = 300  # a wait longer than this is a hang, whatever the machine's load (a busy one too)


@pytest.fixture
def wide(tmp_path: Path) -> Path:
    """A tree whose full report (``--limit 0``) is far bigger than a pipe holds (~160 KB)."""
    body = "".join(
        f'def register_{i}(value):\n    """Register value {i}."""\n    return register(value)\n\n'
        for i in range(30)
    )
    return write_tree(tmp_path / "wide", {f"pkg/mod_{n}.py": body for n in range(120)})


def _catches(pid: int, signum: int) -> bool:
    """Whether process ``pid`` has a handler of its own for ``signum`` (``SigCgt``)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            caught = next(ln for ln in fh if ln.startswith("SigCgt:")).split()[1]
    except (OSError, StopIteration):
        return False
    return bool(int(caught, 16) >> (signum - 1) & 1)


def _cq(*args: str) -> list[str]:
    return [sys.executable, "-m", "cq", *args]


def _workers(server: int) -> list[int]:
    found = []
    for pid in _children(server):
        with contextlib.suppress(OSError):
            if b"cq.server.worker" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
    return sorted(found)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def _until(condition, what: str, timeout: float = HANG_S) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout:g} s: {what}"
        time.sleep(0.05)


def _eof_within(fd: int, timeout: float = HANG_S) -> bool:
    """Read ``fd`` (a pipe's read end) until end of input; False if it did not come."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if select.select([fd], [], [], 0.2)[0] and not os.read(fd, 65536):
            return True
    return False


def _search_frame(streams: int) -> dict[str, object]:
    stream = {"encoding": "utf-8", "errors": "strict", "line_buffering": False}
    return {
        "kind": "search",
        "argv": ["search", "register"],
        "env": dict(os.environ),
        "cwd": "/",
        "umask": 0o022,
        "streams": [{"fd": n, **stream} for n in range(streams)],
    }


# -- a closed stderr -----------------------------------------------------------------------


@pytest.mark.parametrize("through", ["in-process", "server"])
def test_a_closed_stderr_prints_the_search_and_nothing_else(
    repo: Path, runtime: Path, through: str
) -> None:
    """``cq search x 2>&-`` printed ``internal error: AttributeError ... isatty`` on stdout."""
    env = {"CQ_SERVER": "0"} if through == "in-process" else _env(runtime)
    if through == "server":
        _start(runtime)
    alone = run_cq("search", "register", cwd=repo, env={"CQ_SERVER": "0"})
    command = f"{shlex.join(_cq('search', 'register'))} 2>&-"
    closed = subprocess.run(
        ["sh", "-c", command],
        cwd=repo,
        env={**os.environ, **env},
        capture_output=True,
        timeout=120,
    )
    if through == "server":
        assert _served(runtime) == 1
    assert closed.returncode == 0, closed.stdout
    assert _report(alone)[1].decode() == "\n".join(
        line for line in closed.stdout.decode().split("\n") if not line.startswith("run: ")
    )


def test_a_closed_stderr_is_no_internal_error_for_other_commands(repo: Path) -> None:
    for args in (("index", "--root", str(repo)), ("search", "--max-files", "-3", "register")):
        command = f"{shlex.join(_cq(*args))} 2>&-"
        run = subprocess.run(
            ["sh", "-c", command],
            cwd=repo,
            env={**os.environ, "CQ_SERVER": "0"},
            capture_output=True,
            timeout=120,
        )
        assert b"internal error" not in run.stdout, (args, run.stdout)
        assert run.returncode == (0 if args[0] == "index" else 2), (args, run.stdout)


# -- nothing holds back another search -------------------------------------------------------


def _unread(wide: Path, runtime: Path) -> tuple[list[int], list[subprocess.Popen[bytes]]]:
    """Two ``cq search ... | less`` nobody reads: each has filled its pipe (the pipe has
    data; the rest of the ~160 KB answer waits), in the server or in-process."""
    env = {**os.environ, **_env(runtime)}
    readers: list[int] = []
    clients: list[subprocess.Popen[bytes]] = []
    for _ in range(2):
        read, write = os.pipe()
        readers.append(read)
        clients.append(
            subprocess.Popen(
                _cq("search", "register", "--limit", "0"),
                cwd=wide,
                env=env,
                stdout=write,
                stderr=subprocess.DEVNULL,
            )
        )
        os.close(write)
        _until(lambda r=read: select.select([r], [], [], 0)[0], "the answer in the pipe")
    return readers, clients


def test_unread_pipes_and_a_stopped_process_hold_back_no_search(
    repo: Path, wide: Path, runtime: Path
) -> None:
    """Two pipes nobody reads: the next search is served warm (every later search hung,
    both search processes blocked writing). A stopped search process besides: the next
    search still answers, as in-process."""
    server = _start(runtime)
    readers, clients = _unread(wide, runtime)
    stopped: list[int] = []
    try:
        _until(lambda: _status(runtime)["busy"] == 0, "no search process tied up")
        _until(lambda: _status(runtime).get("ready"), "a search process ready")
        alone = run_cq("search", "register", cwd=repo, env={"CQ_SERVER": "0"})
        before = _served(runtime)
        warm = run_cq("search", "register", cwd=repo, env=_env(runtime), timeout=HANG_S)
        assert _served(runtime) == before + 1, "not through the server"
        assert warm.returncode == 0 and warm.stderr == "", warm.stderr
        assert _report(warm)[1] == _report(alone)[1]
        for victim in _workers(server):
            os.kill(victim, signal.SIGSTOP)
            stopped.append(victim)
        next_one = run_cq("search", "register", cwd=repo, env=_env(runtime), timeout=HANG_S)
        assert next_one.returncode == 0 and next_one.stderr == "", next_one.stderr
        assert _report(next_one)[1] == _report(alone)[1]
    finally:
        for pid in stopped:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGCONT)
        for client in clients:
            client.kill()
            client.wait()
        for read in readers:
            os.close(read)


def test_a_killed_client_lets_go_of_its_pipe(repo: Path, wide: Path, runtime: Path) -> None:
    """``timeout 15 cq search ... | grep x`` after two unread pipes: once the client is
    killed, its stdout reaches end of input (the server held it 11 minutes)."""
    _start(runtime)
    env = {**os.environ, **_env(runtime)}
    held, clients = _unread(wide, runtime)
    try:
        read, write = os.pipe()
        held.append(read)
        client = subprocess.Popen(
            _cq("search", "register"), cwd=repo, env=env, stdout=write, stderr=subprocess.PIPE
        )
        clients.append(client)
        os.close(write)
        with contextlib.suppress(subprocess.TimeoutExpired):
            client.wait(timeout=10)  # searched and done, or waiting on the server
        client.send_signal(signal.SIGTERM)
        client.wait(timeout=HANG_S)
        assert _eof_within(read), "the killed client's stdout is still held"
    finally:
        for each in clients:
            each.kill()
            each.wait()
        for fd in held:
            os.close(fd)


def _long_search(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A tree and settings that make a search run long enough to act on (as in
    ``test_server``'s ^C test)."""
    body = "".join(
        f"def handler_{i}(value):\n    return handler_{i - 1}(value) + {i}\n\n"
        for i in range(1, 800)
    )
    # every test using it ends the search early: its length only has to outlast the polls
    # that see it start on a loaded machine (80 files did not, under nice beside burners)
    big = write_tree(tmp_path / "big", {f"pkg/mod_{n}.py": f"# {n}\n{body}" for n in range(400)})
    return big, {"CQ_POOL_MIN_BYTES": "1", "CQ_MAX_WORKERS": "2"}


def test_a_search_process_stopped_mid_search_is_left(
    repo: Path, runtime: Path, tmp_path: Path
) -> None:
    """Someone stops (SIGSTOP) the process running a client's search: the client says so in
    one line and searches in-process; the stopped process, which holds the client's pipes and
    can run no code, is killed."""
    big, extra = _long_search(tmp_path)
    server = _start(runtime)
    env = {**os.environ, **_env(runtime), **extra}
    read, write = os.pipe()
    client = subprocess.Popen(
        _cq("search", "value", "--root", str(big), "--no-cache"),
        env=env,
        stdout=write,
        stderr=subprocess.PIPE,
    )
    os.close(write)
    victim = None
    try:
        _until(lambda: _status(runtime)["busy"] or client.poll() is not None, "the search")
        # busy is said when the server hands the search over; the search process's "started"
        # reaches the client a moment later (then it passes ^Z on): stopped before that, the
        # client is right to say the server did not take the search, and this is not that case
        _until(
            lambda: _catches(client.pid, signal.SIGTSTP) or client.poll() is not None,
            "the client's ^Z handler",
        )
        assert client.poll() is None, "the search ended before it could be stopped"
        (victim,) = [p for p in _workers(server) if _state(p) != "T"][:1]
        os.kill(victim, signal.SIGSTOP)
        assert _eof_within(read, 600), "the client's stdout is held"
        _out, err = client.communicate(timeout=HANG_S)
        assert client.returncode == 0, err
        notes = err.decode().splitlines()
        assert notes == [
            f"cq: the cq server's search process (pid {victim}) is stopped; searching alone"
        ], err
        _until(lambda: not _alive(victim), "the stopped process killed")
    finally:
        if victim is not None:
            with contextlib.suppress(OSError):
                os.kill(victim, signal.SIGCONT)
        client.kill()
        client.wait()
        os.close(read)


def test_ctrl_z_stops_the_search_and_fg_continues_it(runtime: Path, tmp_path: Path) -> None:
    """SIGTSTP to a client whose search runs in the server stops that search too; SIGCONT
    continues both."""
    big, extra = _long_search(tmp_path)
    server = _start(runtime)
    env = {**os.environ, **_env(runtime), **extra}
    client = subprocess.Popen(
        _cq("search", "value", "--root", str(big), "--no-cache"),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=os.setpgrp,  # a job of its own, as a shell starts it: ^Z stops it
    )
    try:
        _until(lambda: _status(runtime)["busy"] or client.poll() is not None, "the search")
        # the client passes ^Z on once it holds the search process's pidfd, a moment after the
        # server says busy: until then ^Z stops the client alone, as it would any process
        _until(
            lambda: _catches(client.pid, signal.SIGTSTP) or client.poll() is not None,
            "the client's ^Z handler",
        )
        assert client.poll() is None, "the search ended before it could be stopped"
        client.send_signal(signal.SIGTSTP)
        # the search's process, whichever of the server's it is (a warm spare may be beside it;
        # the first pid was not always the busy one): none other is stopped by anything here
        _until(
            lambda: [p for p in _workers(server) if _state(p) == "T"],
            "the search process stopped with its client",
        )
        (worker,) = [p for p in _workers(server) if _state(p) == "T"]
        _until(lambda: _state(client.pid) == "T", "the client stopped")
        client.send_signal(signal.SIGCONT)
        _until(lambda: _state(worker) not in ("T", "gone"), "the search process continued")
        client.send_signal(signal.SIGINT)
        client.wait(timeout=HANG_S)
        _until(lambda: _status(runtime)["busy"] == 0, "the search cancelled")
    finally:
        client.kill()
        client.wait()


# -- descriptors ------------------------------------------------------------------------------


def test_an_oversized_request_lets_go_of_the_client_s_pipes(runtime: Path) -> None:
    """A frame over the size limit, sent with the client's stdout: the server drops the
    frame and closes the pipe it received (``$(cq search ...)`` hung 15 minutes)."""
    server = _start(runtime)
    read, write = os.pipe()
    sock = _said_hello(runtime)
    try:
        header = ((1 << 24) + 1).to_bytes(4, "big") + b'{"kind":"search"'
        socket.send_fds(sock, [header], [write])
        os.close(write)
        assert _eof_within(read), "the server holds the client's pipe"
    finally:
        sock.close()
        os.close(read)
    assert lock_holder(_dir(runtime)) == server
    _status(runtime)


@pytest.mark.parametrize("sent", [2, 5], ids=["missing", "truncated"])
def test_a_request_without_its_descriptors_is_refused_and_said(runtime: Path, sent: int) -> None:
    """Three streams described, two sent (or five: more than a frame takes, so the kernel
    drops some, MSG_CTRUNC): ``unserved`` with the reason, every descriptor let go."""
    _start(runtime)
    pipes = [os.pipe() for _ in range(sent)]
    sock = _said_hello(runtime)
    try:
        socket.send_fds(sock, [_frame(_search_frame(3))], [w for _r, w in pipes])
        for _r, w in pipes:
            os.close(w)
        reply = _read_frame(sock)
        assert reply is not None and reply["kind"] == "unserved", reply
        assert "standard streams" in str(reply["reason"])
        for r, _w in pipes:
            assert _eof_within(r), "a descriptor of the refused request is still held"
    finally:
        sock.close()
        for r, _w in pipes:
            os.close(r)


def test_running_out_of_descriptors_is_transient(repo: Path, runtime: Path) -> None:
    """A server kept two descriptors short of its limit by idle clients: a search's stdio
    cannot all come (MSG_CTRUNC); each search still prints its answer (in-process, said in
    one line, or through the server) and the server lives on. It ran searches without their
    stdout (nothing printed, exit 1), and exited at the first EMFILE."""
    import threading

    limit = 48

    def few_fds() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    def limited(*args: str, env: dict[str, str]) -> CqRun:
        """cq under the server's descriptor limit: the same process context, so served."""
        return CqRun(
            subprocess.run(
                [sys.executable, "-m", "cq", *args],
                cwd=repo,
                env={**os.environ, **env},
                capture_output=True,
                timeout=HANG_S * 2,
                preexec_fn=few_fds,
            )
        )

    started = subprocess.run(
        _cq("server", "start"),
        env={**os.environ, **_env(runtime)},
        capture_output=True,
        timeout=120,
        preexec_fn=few_fds,
    )
    assert started.returncode == 0, started.stderr
    server = lock_holder(_dir(runtime))
    assert server is not None
    idle: list[socket.socket] = []
    done = threading.Event()

    def keep_short() -> None:
        """Idle clients (each drops after the server's read timeout) until two are left."""
        while not done.is_set():
            try:
                free = limit - len(os.listdir(f"/proc/{server}/fd"))
            except OSError:
                return  # the server is gone: the test says so
            if free <= 2:
                time.sleep(0.02)
                continue
            with contextlib.suppress(OSError):
                idle.append(_said_hello(runtime))

    filler = threading.Thread(target=keep_short, daemon=True)
    filler.start()
    try:
        _until(lambda: limit - len(os.listdir(f"/proc/{server}/fd")) <= 2, "short of fds")
        alone = limited("search", "register", env={"CQ_SERVER": "0"})
        for _ in range(3):
            run = limited("search", "register", env=_env(runtime))
            assert run.returncode == 0, (run.stdout, run.stderr)
            assert len(run.stderr.splitlines()) <= 1, run.stderr
            assert _report(run)[1] == _report(alone)[1]
    finally:
        done.set()
        filler.join()
        for sock in idle:
            sock.close()
    assert lock_holder(_dir(runtime)) == server, "the server did not survive"
    _until(lambda: _status(runtime).get("ready"), "a ready search process")
    before = _served(runtime)
    assert limited("search", "register", env=_env(runtime)).returncode == 0
    assert _served(runtime) == before + 1


# -- stop, status, staging sockets ------------------------------------------------------------


def test_server_stop_in_a_child_pid_namespace_signals_nothing_it_cannot_see(
    runtime: Path,
) -> None:
    """The server does not answer (stopped) and its pid is not visible from the caller's pid
    namespace, where the kernel names the lock's holder 0: ``kill(0, ...)`` killed the
    caller's own shell."""
    if subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"]).returncode:
        pytest.skip("cannot make a pid namespace here (unshare)")
    server = _start(runtime)
    os.kill(server, signal.SIGSTOP)
    try:
        command = f"{shlex.join(_cq('server', 'stop'))}; echo survived $?"
        run = subprocess.run(
            ["unshare", "--pid", "--fork", "--mount-proc", "sh", "-c", command],
            env={**os.environ, **_env(runtime)},
            capture_output=True,
            timeout=120,
            start_new_session=True,  # what a kill(0) signals is this group, not the test's
        )
        assert b"survived 2" in run.stdout, (run.stdout, run.stderr)
        assert b"not visible" in run.stderr
    finally:
        os.kill(server, signal.SIGCONT)


def test_status_tells_the_idle_time_and_does_not_keep_the_server_up(runtime: Path) -> None:
    """``cq server status`` said idle 0 s every time, and each status restarted the idle
    clock: a watch of the status kept the server up for ever."""
    server = _start(runtime, CQ_SERVER_IDLE_S="4")
    family = {server, *_children(server)}
    idle = []

    def watched_until_gone() -> bool:
        status = run_cq("server", "status", env=_env(runtime, CQ_SERVER_IDLE_S="4"))
        if status.returncode == 0:
            idle.append(float(status.stdout.split("idle ")[1].split(" s")[0]))
        return not any(_alive(p) for p in family)

    _until(watched_until_gone, "the server's idle exit, watched by status", 120)
    assert any(seconds > 0 for seconds in idle), idle


def test_staging_sockets_of_dead_servers_are_swept(runtime: Path) -> None:
    directory = Path(_dir(runtime))
    directory.mkdir(mode=0o700, parents=True)
    directory.parent.chmod(0o700)
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = directory / f"server.sock.{dead.pid}"
    leftover = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    leftover.bind(str(stale))
    leftover.close()
    _start(runtime)
    assert not stale.exists()
    names = sorted(p.name for p in directory.iterdir())
    assert [n for n in names if n != "code-digest"] == ["server.lock", "server.sock"]


def test_a_reader_that_leaves_ends_a_relayed_search_as_in_process(
    wide: Path, runtime: Path
) -> None:
    """``cq search ... | head -1`` through the server: the first line, exit 0 (the client
    wrote the output and met the closed pipe), and the search process is free again."""
    _start(runtime)
    command = f"{shlex.join(_cq('search', 'register', '--limit', '0'))} | head -1"
    run = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command],
        cwd=wide,
        env={**os.environ, **_env(runtime)},
        capture_output=True,
        timeout=120,
    )
    assert run.returncode == 0 and run.stdout == b"# cq search `register`\n", run
    assert _served(runtime) == 1
    _until(lambda: _status(runtime)["busy"] == 0, "the search process free again")
