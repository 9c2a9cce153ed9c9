"""The per-user server, run for real: ``cq server start``, searches through it, a dead, stuck,
stale or foreign server, ``cq server stop`` and the idle exit. Each test has a runtime dir of
its own (``XDG_RUNTIME_DIR``), turns the server on (the suite runs with ``CQ_SERVER=0``) and
stops whatever server it made; no test leaves a process behind (``_stop_all``). Linux only."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CqRun, run_cq, write_tree

from cq.server.identity import install_key
from cq.server.lifecycle import lock_holder

# run_cq: the client's CLI forked (forked_cli.py), the server the real daemon it starts; a
# test whose client is another copy of cq (PYTHONPATH) runs it as ``python -m cq``
pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="the server is Linux only"),
    pytest.mark.cli_forked,
]

SOURCE = '''\
import os


def register(name):
    """Register a name in the registry."""
    registered = [name]
    return registered


class Registry:
    def add(self, item):
        return register(item)
'''


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_tree(
        tmp_path / "repo",
        {"app/core.py": SOURCE, "app/use.py": "from app.core import register\nregister('x')\n"},
    )


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A private runtime dir with a short path (a socket path has ~100 bytes at most); the
    server it holds is stopped afterwards, with its search processes."""
    base = Path(tempfile.mkdtemp(prefix="cqs", dir="/tmp"))
    try:
        yield base
    finally:
        _stop_all(base / "cq")
        shutil.rmtree(base, ignore_errors=True)


def _env(runtime: Path, **extra: str) -> dict[str, str]:
    return {"XDG_RUNTIME_DIR": str(runtime), "CQ_SERVER": "1", **extra}


def _dir(runtime: Path, **extra: str) -> str:
    """The server directory of this install with ``_env(runtime, **extra)``."""
    return str(runtime / "cq" / install_key({**os.environ, **_env(runtime, **extra)}))


def _stop_all(directory: Path) -> None:
    """Stop the server of each install under ``directory`` (``$XDG_RUNTIME_DIR/cq``) and wait
    until they and their children are gone; kill what is left. Each is asked over its socket
    as ``cq server stop`` asks (that command's own test is ``test_server_stop_stops_...``; a
    process of it per test cost each its start); one that does not answer is killed."""
    dirs = [d for d in directory.iterdir() if d.is_dir()] if directory.is_dir() else []
    holders = [lock_holder(str(d)) for d in dirs]
    family = {p for holder in holders if holder is not None for p in (holder, *_children(holder))}
    if not family:
        return
    if all(_asked_to_stop(d) for d, holder in zip(dirs, holders, strict=True) if holder):
        deadline = time.monotonic() + 300  # a condition, not a clock: generous when busy
        while any(_alive(p) for p in family) and time.monotonic() < deadline:
            time.sleep(0.05)
    for pid in family:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _asked_to_stop(directory: Path) -> bool:
    """Whether the server in ``directory`` took a stop (a stopped or stuck one does not)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    try:
        sock.connect(str(directory / "server.sock"))
        sock.sendall(_frame({"kind": "hello"}))
        welcome = _read_frame(sock)
        if welcome is None or welcome["kind"] != "welcome":
            return False
        sock.sendall(_frame({"kind": "stop"}))
        return _read_frame(sock) is not None
    except OSError:
        return False
    finally:
        sock.close()


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                found |= {
                    int(x) for x in Path(f"/proc/{pid}/task/{task}/children").read_text().split()
                }
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _start(runtime: Path, cwd: Path | None = None, **extra: str) -> int:
    started = run_cq("server", "start", cwd=cwd, env=_env(runtime, **extra))
    # ``cq server start`` gives up after its own 30 s; under ``nice`` beside CPU burners the
    # server took longer to come up. Asked again it finds the one starting (one per settings):
    # wait for that event, not for a clock the load decides.
    give_up = time.monotonic() + 300
    while "did not start within" in started.stderr and time.monotonic() < give_up:
        started = run_cq("server", "start", cwd=cwd, env=_env(runtime, **extra))
    assert started.returncode == 0, started.stderr
    found = re.search(r"running, pid (\d+)", started.stdout)  # (another install's dir differs)
    assert found, started.stdout
    return int(found.group(1))


def _served(runtime: Path, cwd: Path | None = None, **extra: str) -> int:
    """How many searches the server of these settings has served: its status, asked over the
    socket as cq's client asks it (a ``cq server status`` process per look cost each test
    its start; ``test_a_search_through_the_server_prints_...`` reads the number there too)."""
    return int(_status(runtime, **extra)["served"])  # type: ignore[call-overload]


def _served_by_the_cli(runtime: Path) -> int:
    status = run_cq("server", "status", env=_env(runtime))
    assert status.returncode == 0, status.stdout + status.stderr
    found = re.search(r"(\d+) search(?:es)? served", status.stdout)
    assert found, status.stdout
    return int(found.group(1))


# -- the raw protocol, as a client speaks it ------------------------------------------------

HANG_S = 300  # a wait longer than this is a hang, whatever the machine's load (a busy one too)


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return len(body).to_bytes(4, "big") + body


def _read_frame(sock: socket.socket) -> dict[str, object] | None:
    data = b""
    while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk
    return json.loads(data[4 : 4 + int.from_bytes(data[:4], "big")])


def _said_hello(runtime: Path, **extra: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(HANG_S)
    sock.connect(str(Path(_dir(runtime, **extra)) / "server.sock"))
    sock.sendall(_frame({"kind": "hello"}))
    welcome = _read_frame(sock)
    assert welcome is not None and welcome["kind"] == "welcome", welcome
    return sock


def _status(runtime: Path, **extra: str) -> dict[str, object]:
    sock = _said_hello(runtime, **extra)
    try:
        sock.sendall(_frame({"kind": "status"}))
        status = _read_frame(sock)
        assert status is not None
        return status
    finally:
        sock.close()


def _report(run: CqRun) -> tuple[int, bytes, str]:
    """What must match between the two paths: the exit code, stdout but for the run facts
    (timings and cache counters differ from run to run) and stderr."""
    if run.stdout_bytes.startswith(b"{"):
        document = run.json()
        document.pop("run")
        return run.returncode, json.dumps(document).encode(), run.stderr
    kept = b"\n".join(
        line for line in run.stdout_bytes.split(b"\n") if not line.startswith(b"run: ")
    )
    return run.returncode, kept, run.stderr


CASES = [
    pytest.param(("search", "register"), None, 0, id="identifier"),
    pytest.param(("search", "where is a name registered"), None, 0, id="question"),
    pytest.param(("search", "--format", "json", "register"), None, 0, id="json"),
    pytest.param(("search", "zz_nothing_matches_this"), None, 1, id="no-match"),
    pytest.param(("search", "--max-files", "-3", "register"), None, 2, id="bad-flag"),
    pytest.param(("search", "-"), "register\n", 0, id="stdin"),
]


def test_a_search_through_the_server_prints_what_an_in_process_one_does(
    repo: Path, runtime: Path
) -> None:
    _start(runtime)
    for case in CASES:
        argv, stdin, code = case.values
        alone = run_cq(*argv, cwd=repo, stdin=stdin, env={"CQ_SERVER": "0"})
        before = _served(runtime)
        served = run_cq(*argv, cwd=repo, stdin=stdin, env=_env(runtime))
        assert _served(runtime) == before + 1, f"{case.id} did not go through the server"
        assert alone.returncode == code, (case.id, alone.stderr)
        assert _report(served) == _report(alone), case.id
    assert _served_by_the_cli(runtime) == _served(runtime) == len(CASES)


def test_names_that_are_not_utf8_go_through_the_server_alike(
    repo: Path, runtime: Path, tmp_path: Path
) -> None:
    """A root, a file and the cache dir (one of the server's settings) whose names are not
    UTF-8: the server starts, serves the search, and prints what an in-process one does."""
    odd = repo.rename(repo.with_name("repo_\udce9"))
    (odd / "app/bad_\udcff.py").write_bytes(b"def odd_one():\n    return register\n")
    cache = str(tmp_path / "cache_\udce9")
    _start(runtime, CQ_CACHE_DIR=cache)
    for argv in (("search", "register"), ("search", "--format", "json", "register")):
        alone = run_cq(*argv, cwd=odd, env={"CQ_SERVER": "0", "CQ_CACHE_DIR": cache})
        before = _served(runtime, CQ_CACHE_DIR=cache)
        served = run_cq(*argv, cwd=odd, env=_env(runtime, CQ_CACHE_DIR=cache))
        assert _served(runtime, CQ_CACHE_DIR=cache) == before + 1, "not through the server"
        assert alone.returncode == 0 and "app/bad_\\udcff.py" in alone.stdout, alone.stderr
        # stdout alike; stderr warns that such a cache dir is unusable (sqlite cannot name
        # it): in-process at each search, the server's search process once
        assert _report(served)[:2] == _report(alone)[:2]
        assert "Traceback" not in served.stderr


def test_a_dead_server_is_bypassed_and_said_once(repo: Path, runtime: Path) -> None:
    pid = _start(runtime)
    family = {pid, *_children(pid)}
    for member in family:
        os.kill(member, signal.SIGKILL)
    assert Path(_dir(runtime), "server.sock").exists()  # left behind
    alone = run_cq("search", "register", cwd=repo, env={"CQ_SERVER": "0"})
    first = run_cq("search", "register", cwd=repo, env=_env(runtime))
    assert first.returncode == alone.returncode == 0
    assert _report(first)[1] == _report(alone)[1]
    notes = first.stderr.splitlines()
    assert len(notes) == 1 and notes[0].startswith("cq: the cq server is gone"), first.stderr
    second = run_cq("search", "register", cwd=repo, env=_env(runtime))
    assert second.stderr == "" and second.returncode == 0


def test_a_stuck_server_is_bypassed(repo: Path, runtime: Path) -> None:
    """A socket that accepts and never answers (owned by this test, not a cq server)."""
    directory = Path(_dir(runtime))
    directory.parent.mkdir(mode=0o700)
    directory.mkdir(mode=0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(directory / "server.sock"))
    listener.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                held.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        alone = run_cq("search", "register", cwd=repo, env={"CQ_SERVER": "0"})
        # A client that waited for the stuck server would never end (run_cq's bound fails
        # it): one that ends, says it gave up on the server and answers as in-process, did
        # not wait for it. A condition, not a clock: the wait for the server's hello is the
        # client's own deadline, whatever the machine's load.
        stuck = run_cq("search", "register", cwd=repo, env=_env(runtime))
        assert held, "the client never connected"
        assert stuck.returncode == 0 and _report(stuck)[1] == _report(alone)[1]
        notes = stuck.stderr.splitlines()
        assert len(notes) == 1 and "did not answer within" in notes[0], stuck.stderr
        assert "searching without it" in notes[0], stuck.stderr
    finally:
        stop.set()
        thread.join()
        listener.close()
        for conn in held:
            conn.close()


def _copy_of_cq(copy: Path) -> Path:
    """Another install of this cq: the package and the profiles it ships beside it."""
    import cq

    package = Path(cq.__file__).parent
    shutil.copytree(package, copy / "cq", ignore=shutil.ignore_patterns("__pycache__"))
    if (package.parent / "profiles").is_dir():  # a checkout's (a wheel has cq/_profiles)
        shutil.copytree(package.parent / "profiles", copy / "profiles")
    return copy


@pytest.mark.cli_subprocess
def test_servers_of_two_settings_and_two_installs_stay_side_by_side(
    repo: Path, runtime: Path, tmp_path: Path
) -> None:
    """Another value of a setting the server keeps, or another copy of cq (a second venv),
    has a server of its own: searches alternating between them each go to their own, warm,
    and neither replaces the other."""
    copy = _copy_of_cq(tmp_path / "copy")
    kinds = [{}, {"CQ_CACHE_MAX_MB": "64"}, {"PYTHONPATH": str(copy)}]
    pids = [_start(runtime, tmp_path, **extra) for extra in kinds]  # not cwd's cq first
    assert len(set(pids)) == 3
    for _ in range(2):
        for extra in kinds:
            run = run_cq("search", "register", cwd=repo, env=_env(runtime, **extra))
            assert run.returncode == 0 and run.stderr == "", run.stderr
    assert all(_alive(pid) for pid in pids)
    assert [_served(runtime, tmp_path, **extra) for extra in kinds] == [2, 2, 2]
    every = run_cq("server", "status", "--all", env=_env(runtime))
    assert every.returncode == 0 and every.stdout.count("cq server: running") == 3
    assert every.stdout.count("another install's or settings' server") == 2


def test_status_says_when_only_another_settings_server_runs(runtime: Path) -> None:
    """Not running for these settings, while one for another cache size runs: said so,
    with where to look, still exit 1."""
    _start(runtime, CQ_CACHE_MAX_MB="64")
    status = run_cq("server", "status", env=_env(runtime))
    assert status.returncode == 1
    assert status.stdout.startswith("cq server: not running (for this install and settings; ")
    assert "1 server of another install or other settings runs" in status.stdout
    assert "'cq server status --all'" in status.stdout


@pytest.mark.cli_subprocess
def test_a_server_of_other_code_is_replaced(repo: Path, runtime: Path, tmp_path: Path) -> None:
    """The same install with one source file changed (an edited checkout) is another cq:
    its server goes at the next search."""
    copy = _copy_of_cq(tmp_path / "copy")
    old = _start(runtime, tmp_path, PYTHONPATH=str(copy))  # not cwd's cq first
    assert str(copy) in Path(f"/proc/{old}/environ").read_text(errors="replace")
    with open(copy / "cq" / "errors.py", "a", encoding="utf-8") as fh:
        fh.write("\n# changed\n")
    run = run_cq("search", "register", cwd=repo, env=_env(runtime, PYTHONPATH=str(copy)))
    assert run.returncode == 0 and run.stderr == ""
    new = _start(runtime, tmp_path, PYTHONPATH=str(copy))
    assert new != old and not _alive(old)


def test_another_user_is_refused(runtime: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("needs root to connect as another user")
    _start(runtime)
    directory = Path(_dir(runtime))
    os.chmod(runtime, 0o755)  # let the other user reach the socket: the uid check must hold
    os.chmod(directory.parent, 0o755)
    os.chmod(directory, 0o755)
    os.chmod(directory / "server.sock", 0o666)
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        answer = b"error"
        try:
            os.setgid(65534)
            os.setuid(65534)
            peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            peer.settimeout(20)
            peer.connect(str(directory / "server.sock"))
            body = json.dumps({"kind": "hello"}).encode()
            peer.sendall(len(body).to_bytes(4, "big") + body)
            data = b""
            while chunk := peer.recv(4096):
                data += chunk
            answer = json.loads(data[4:])["kind"].encode()
        except Exception as exc:
            answer = repr(exc).encode()
        finally:
            os.write(write, answer)
            os._exit(0)
    os.close(write)
    os.waitpid(child, 0)
    with os.fdopen(read, "rb") as fh:
        answer = fh.read().decode()
    os.chmod(directory, 0o700)
    os.chmod(directory.parent, 0o700)
    assert answer == "refused"


def test_a_client_refuses_a_runtime_dir_open_to_others(repo: Path, runtime: Path) -> None:
    (runtime / "cq").mkdir(mode=0o700)
    os.chmod(runtime / "cq", 0o777)
    run = run_cq("search", "register", cwd=repo, env=_env(runtime))
    assert run.returncode == 0
    assert (
        run.stderr.startswith("cq: not using the cq server: ")
        and "open to other users" in run.stderr
    )
    assert lock_holder(_dir(runtime)) is None


def test_server_stop_stops_it_and_its_search_processes(repo: Path, runtime: Path) -> None:
    pid = _start(runtime)
    run_cq("search", "register", cwd=repo, env=_env(runtime))
    family = {pid, *_children(pid)}
    assert len(family) >= 2  # the server and its search process
    stopped = run_cq("server", "stop", env=_env(runtime))
    assert stopped.returncode == 0 and f"pid {pid}" in stopped.stdout
    deadline = time.monotonic() + 300  # a condition, not a clock: generous on a busy machine
    while any(_alive(p) for p in family) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in family)
    status = run_cq("server", "status", env=_env(runtime))
    assert status.returncode == 1 and "not running" in status.stdout
    assert not Path(_dir(runtime), "server.sock").exists()


def test_the_server_exits_when_idle(runtime: Path) -> None:
    pid = _start(runtime, CQ_SERVER_IDLE_S="1")
    family = {pid, *_children(pid)}
    deadline = time.monotonic() + 300  # a condition, not a clock: generous on a busy machine
    while any(_alive(p) for p in family) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in family)
    assert lock_holder(_dir(runtime)) is None


def test_cq_server_0_never_starts_one(repo: Path, runtime: Path) -> None:
    run = run_cq("search", "register", cwd=repo, env={**_env(runtime), "CQ_SERVER": "0"})
    assert run.returncode == 0
    assert not (runtime / "cq").exists()


def test_a_refused_command_line_starts_no_server(repo: Path, runtime: Path) -> None:
    for argv in (["search"], ["search", "register", "--bogus"], ["search", "x", "--limit", "x"]):
        run = run_cq(*argv, cwd=repo, env=_env(runtime))
        assert run.returncode == 2 and run.stderr.startswith("cq: ")
    assert _started_servers(runtime) == 0 and lock_holder(_dir(runtime)) is None
    # The search that runs starts one.
    assert run_cq("search", "register", cwd=repo, env=_env(runtime)).returncode == 0
    directory = _dir(runtime)
    deadline = time.monotonic() + 120  # a condition, not a clock: generous when busy
    while lock_holder(directory) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert lock_holder(directory) is not None
    assert _started_servers(runtime) == 1


def _started_servers(runtime: Path) -> int:
    """The server processes whose runtime dir is ``runtime`` (``cq.server.daemon``'s argv)."""
    count = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            count += b"cq.server.daemon" in argv and str(runtime).encode() in b" ".join(argv)
    return count


def test_ctrl_c_in_the_client_cancels_the_search_in_the_server(
    runtime: Path, tmp_path: Path
) -> None:
    body = "".join(
        f"def handler_{i}(value):\n    return handler_{i - 1}(value) + {i}\n\n"
        for i in range(1, 800)
    )
    # long enough that several polls of the server's status (each a cq process, slow on a
    # loaded machine) see it busy before it ends: 80 files ended first under nice and burners
    big = write_tree(tmp_path / "big", {f"pkg/mod_{n}.py": f"# {n}\n{body}" for n in range(400)})
    pid = _start(runtime)
    env = {**os.environ, **_env(runtime), "CQ_POOL_MIN_BYTES": "1", "CQ_MAX_WORKERS": "2"}
    client = subprocess.Popen(
        [sys.executable, "-m", "cq", "search", "value", "--root", str(big), "--no-cache"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as at a shell
    )
    try:
        deadline = time.monotonic() + 300  # a condition, not a clock: generous on a busy machine
        while _busy(runtime) == 0 and client.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        if client.poll() is not None:  # what it said (a fallback to in-process, say)
            pytest.fail(
                f"the search ended before it could be interrupted: {client.stderr.read()!r}"
            )
        client.send_signal(signal.SIGINT)
        _out, err = client.communicate(timeout=300)
        assert client.returncode == 130 and b"Traceback" not in err, err
        deadline = time.monotonic() + 300  # a condition, not a clock: generous on a busy machine
        while _busy(runtime) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _busy(runtime) == 0, "the server still runs the cancelled search"
        assert lock_holder(_dir(runtime)) == pid  # and serves on
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()


def _busy(runtime: Path) -> int:
    return int(_status(runtime)["busy"])  # type: ignore[call-overload]


def test_one_search_s_environment_and_directory_stay_its_own(
    repo: Path, runtime: Path, tmp_path: Path
) -> None:
    other = write_tree(
        tmp_path / "other", {"lib/registry.py": SOURCE.replace("register", "enlist")}
    )
    _start(runtime)
    first = run_cq("search", "register", cwd=repo, env=_env(runtime, CQ_FORMAT="json"))
    assert first.returncode == 0 and first.json()["summary"]["root"] == str(repo)
    second = run_cq("search", "enlist", cwd=other, env=_env(runtime))
    assert second.returncode == 0 and not second.stdout.startswith("{")  # markdown again
    assert "lib/registry.py" in second.stdout and "app/core.py" not in second.stdout
    third = run_cq("search", "enlist", cwd=repo, env=_env(runtime))
    assert third.returncode == 1  # searched where it ran, not where the last one did
    assert _served(runtime) == 3


def test_clients_starting_at_once_make_one_server(repo: Path, runtime: Path) -> None:
    env = {**os.environ, **_env(runtime)}
    argv = [sys.executable, "-m", "cq", "search", "register"]
    clients = [
        subprocess.Popen(argv, cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(3)
    ]
    for client in clients:
        _out, err = client.communicate(timeout=120)
        assert client.returncode == 0 and err == b"", err  # each searched, none said a thing
    deadline = time.monotonic() + 300  # a condition, not a clock: generous on a busy machine
    while len(servers := _servers_of(runtime)) != 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(servers) == 1 and lock_holder(_dir(runtime)) in servers


def _servers_of(runtime: Path) -> set[int]:
    """The live server processes started for this runtime dir (by their environment)."""
    found: set[int] = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and _alive(int(entry)):
            with contextlib.suppress(OSError):
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
                environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
                if (
                    b"cq.server.daemon" in cmdline
                    and f"XDG_RUNTIME_DIR={runtime}".encode() in environ
                ):
                    found.add(int(entry))
    return found


def test_a_frozen_server_is_bypassed_and_replaced(repo: Path, runtime: Path) -> None:
    """A real server that stopped answering (SIGSTOP): said once, killed, a new one started."""
    old = _start(runtime)
    family = {old, *_children(old)}
    os.kill(old, signal.SIGSTOP)
    try:
        frozen = run_cq("search", "register", cwd=repo, env=_env(runtime))
        assert frozen.returncode == 0 and "register" in frozen.stdout
        notes = frozen.stderr.splitlines()
        assert len(notes) == 1 and f"(pid {old}) did not answer" in notes[0], frozen.stderr
        deadline = time.monotonic() + 300  # a condition, not a clock: generous on a busy machine
        while any(_alive(p) for p in family) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(p) for p in family), "the frozen server or its process lives on"
        assert _start(runtime) != old
    finally:
        with contextlib.suppress(OSError):
            os.kill(old, signal.SIGKILL)


def test_every_search_through_the_server_says_its_warnings(repo: Path, runtime: Path) -> None:
    """rg cannot read a file: each search warns, not only the server's first one."""
    from test_hardening_input import without_permission_checks_bypassed

    prefix = without_permission_checks_bypassed()  # the server inherits it: rg must fail
    secret = repo / "app" / "secret.py"
    secret.write_text("register = 1\n", encoding="utf-8")
    secret.chmod(0o000)
    env = {**os.environ, **_env(runtime)}
    argv = [sys.executable, "-m", "cq"]
    started = subprocess.run(
        [*prefix, *argv, "server", "start"], env=env, capture_output=True, timeout=120
    )
    assert started.returncode == 0, started.stderr
    runs = [
        subprocess.run(
            [*prefix, *argv, "search", "register"],
            cwd=repo,
            env=env,
            capture_output=True,
            timeout=120,
        )
        for _ in range(2)
    ]
    assert _served(runtime) == 2
    for run in runs:
        assert (
            run.returncode == 0 and b"secret.py" in run.stderr and b"cq: warning: " in run.stderr
        ), run.stderr


def test_a_search_finds_rg_from_its_own_environment(
    repo: Path, runtime: Path, tmp_path: Path
) -> None:
    """The search process found rg for an earlier search; a later one names another."""
    _start(runtime)
    assert run_cq("search", "register", cwd=repo, env=_env(runtime)).returncode == 0
    missing = str(tmp_path / "no-rg")
    alone = run_cq("search", "register", cwd=repo, env={"CQ_SERVER": "0", "CQ_RG": missing})
    served = run_cq("search", "register", cwd=repo, env=_env(runtime, CQ_RG=missing))
    assert _served(runtime) == 2
    assert alone.returncode == 2 and f"CQ_RG={missing}" in alone.stderr
    assert _report(served) == _report(alone)


def test_at_a_terminal_the_server_writes_what_an_in_process_search_does(
    repo: Path, runtime: Path
) -> None:
    """stdout a terminal (a pty): what depends on it (colour, line buffering) is the client's."""
    _start(runtime)
    alone = _at_terminal(
        ["search", "register", "--limit", "3"], repo, {"CQ_SERVER": "0", "TERM": "xterm"}
    )
    before = _served(runtime)
    served = _at_terminal(
        ["search", "register", "--limit", "3"], repo, {**_env(runtime), "TERM": "xterm"}
    )
    assert _served(runtime) == before + 1
    assert alone[0] == served[0] == 0
    strip = re.compile(rb"^run: .*$", re.MULTILINE)
    assert strip.sub(b"", served[1]) == strip.sub(b"", alone[1])


def _at_terminal(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, bytes]:
    """Run cq with stdout on a pty; its exit code and every byte it wrote there."""
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cq", *args],
        cwd=cwd,
        env={**os.environ, **env},
        stdout=slave,
        stderr=subprocess.DEVNULL,
    )
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    return proc.wait(timeout=120), b"".join(chunks)


def test_the_server_a_search_starts_comes_up_once_that_search_is_over(
    repo: Path, runtime: Path
) -> None:
    """A first search searches in-process beside the server it starts; the server's start
    (an interpreter, then a search process importing the search path) waits until that search
    has exited, so it does not take the core the search's own helpers use."""
    client = (
        "import sys\n"
        "from cq.server import lifecycle\n"
        "from cq.server.client import run_through_server, start_wanted\n"
        f"lifecycle.AFTER_CLIENT_S = {HANG_S}\n"  # the wait's bound is not what is tested
        "code = run_through_server(['search', 'register'])\n"
        "start_wanted(0)  # as the CLI does once its in-process search has run\n"
        "print(code, flush=True)\n"
        "sys.stdin.read()\n"
    )
    argv = [sys.executable, "-c", client]
    env = {**os.environ, **_env(runtime)}
    proc = subprocess.Popen(
        argv, cwd=repo, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "None\n"  # in-process
        waiting = {  # a copy of the client, not yet a server
            pid for pid in _processes_of(runtime) if pid != proc.pid and _argv(pid)[1:2] == [b"-c"]
        }
        assert waiting, "no server start waits for the search"
        assert not _servers_of(runtime) and lock_holder(_dir(runtime)) is None
    finally:
        proc.communicate(timeout=HANG_S)
    deadline = time.monotonic() + HANG_S  # a condition, not a clock: generous on a busy machine
    while lock_holder(_dir(runtime)) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(_servers_of(runtime)) == 1


def _processes_of(runtime: Path) -> set[int]:
    """The live processes whose environment names this runtime dir."""
    found: set[int] = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and _alive(int(entry)):
            with contextlib.suppress(OSError):
                environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
                if f"XDG_RUNTIME_DIR={runtime}".encode() in environ:
                    found.add(int(entry))
    return found


def _argv(pid: int) -> list[bytes]:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    return []


def test_no_server_starts_once_the_runtime_dir_of_its_search_is_gone(
    repo: Path, runtime: Path
) -> None:
    """The runtime dir went away while the search that starts the server ran (a logout, or a
    test's teardown): no server starts, neither there nor in the fallback dir under /tmp."""
    client = (
        "import sys\n"
        "from cq.server import lifecycle\n"
        "from cq.server.client import run_through_server, start_wanted\n"
        f"lifecycle.AFTER_CLIENT_S = {HANG_S}\n"
        "code = run_through_server(['search', 'register'])\n"
        "start_wanted(0)  # as the CLI does once its in-process search has run\n"
        "print(code, flush=True)\n"
        "sys.stdin.read()\n"
    )
    env = {**os.environ, **_env(runtime)}
    proc = subprocess.Popen(
        [sys.executable, "-c", client],
        cwd=repo,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "None\n"
    (waiting,) = {p for p in _processes_of(runtime) if p != proc.pid and _argv(p)[1:2] == [b"-c"]}
    shutil.rmtree(runtime)
    proc.communicate(timeout=HANG_S)
    deadline = time.monotonic() + HANG_S  # a condition, not a clock: generous on a busy machine
    while _alive(waiting) and not _holds_a_lock(waiting) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _alive(waiting):
        os.kill(waiting, signal.SIGKILL)
        raise AssertionError("a server started for a runtime dir that is gone")


def _holds_a_lock(pid: int) -> bool:
    """Whether ``pid`` has a server lock file open (a server that settled somewhere)."""
    with contextlib.suppress(OSError):
        return any(
            os.readlink(f"/proc/{pid}/fd/{fd}").endswith("server.lock")
            for fd in os.listdir(f"/proc/{pid}/fd")
        )
    return False
