"""A search through the server is the search in-process, or it does not happen there; and no
one but this user answers for the server.

Run for real: a server started as in ``test_server.py``, clients in a mount namespace with a
tmpfs over part of the tree (``unshare -m``), without network (``unshare -n``, a loopback
LLM endpoint watching), without a supplementary group, under a CPU limit, a stack limit,
fewer descriptors or another nice value; a socket answered by another uid; a runtime dir
whose parent anyone may write. Each client's stdout and exit code are compared with the same
client's under ``CQ_SERVER=0``. Namespaces and other uids need root; without it those tests
are skipped, saying so. Linux only.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
import test_server
from conftest import run_cq, write_tree
from llm_server import ModelServer
from rewrite_fixture import graph_repo
from test_server import SOURCE, _children, _dir, _env, _report, _served, _start

from cq.server.lifecycle import lock_holder

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the server is Linux only")

NOBODY = 65534
OTHER_USER = 4000  # owns the group-only file: the searching user reads it by group or not at all
SECRET_GROUP = 4242  # a group only the server's process has


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "repo", {"app/core.py": SOURCE})


runtime = test_server.runtime  # a private runtime dir, its server stopped after


class Run:
    """One client's outcome, compared as ``test_server._report`` compares two runs."""

    def __init__(self, proc: subprocess.CompletedProcess[bytes]) -> None:
        self.returncode = proc.returncode
        self.stdout_bytes = proc.stdout
        self.stderr = proc.stderr.decode("utf-8", errors="replace")

    def json(self) -> object:
        import json

        return json.loads(self.stdout_bytes)


def _run(
    argv: list[str],
    env: dict[str, str],
    cwd: Path | None = None,
    preexec: Callable[[], None] | None = None,
) -> Run:
    proc = subprocess.run(
        argv,
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        stdin=subprocess.DEVNULL,
        preexec_fn=preexec,
        timeout=120,
    )
    return Run(proc)


def _cq(*args: str) -> list[str]:
    return [sys.executable, "-m", "cq", *args]


def _unshare(flag: str) -> str | None:
    """Why ``unshare FLAG`` cannot be used here, or None."""
    if shutil.which("unshare") is None:
        return "no unshare"
    probe = subprocess.run(["unshare", flag, "true"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        return f"unshare {flag} is not permitted: {probe.stderr.decode().strip()}"
    return None


def _alike(served: Run, alone: Run) -> None:
    """Byte-identical stdout (but for timings and cache counters) and exit code, no stderr
    line more: a refused server leaves no trace."""
    assert _report(served) == _report(alone), served.stderr  # type: ignore[arg-type]


def test_a_client_in_a_mount_namespace_searches_its_own_tree(repo: Path, runtime: Path) -> None:
    why = _unshare("-m")
    if why:
        pytest.skip(why)
    write_tree(repo, {"vault/keys.py": "def vault_secret_token():\n    return 'hunter2'\n"})
    _start(runtime)
    hide = 'mount -t tmpfs none "$0" && exec "$@"'  # the vault is empty in this namespace
    argv = ["unshare", "-m", "sh", "-c", hide, str(repo / "vault"), *_cq("search", "vault_secret")]
    alone = _run(argv, {"CQ_SERVER": "0"}, cwd=repo)
    served = _run(argv, _env(runtime), cwd=repo)
    assert alone.returncode == 1 and b"hunter2" not in alone.stdout_bytes, alone.stderr
    _alike(served, alone)


def test_a_client_without_network_does_not_reach_the_llm_through_the_server(
    runtime: Path, tmp_path: Path
) -> None:
    why = _unshare("-n")
    if why:
        pytest.skip(why)
    root = graph_repo(tmp_path / "graph")
    with ModelServer() as model:
        llm = {"CQ_LLM_URL": model.url, "CQ_LLM_MODEL": "test-model", "CQ_LLM": "on"}
        _start(runtime)
        argv = ["unshare", "-n", *_cq("search", "how are edges inserted into the graph?")]
        argv += ["--root", str(root), "--format", "json"]
        alone = _run(argv, {**llm, "CQ_SERVER": "0"})
        served = _run(argv, {**llm, **_env(runtime)})
        assert model.requests == []  # the question never left the client's namespace
    assert alone.returncode == 0, alone.stderr
    _alike(served, alone)


def _without_dac(groups: str) -> list[str]:
    """Root held to file modes (no ``CAP_DAC_*`` after exec), with these supplementary groups."""
    drop = "--bounding-set=-dac_override,-dac_read_search"
    return ["setpriv", drop, *(["--clear-groups"] if not groups else [f"--groups={groups}"]), "--"]


def test_a_client_without_a_group_cannot_read_a_group_file_through_the_server(
    repo: Path, runtime: Path
) -> None:
    """The server runs with a supplementary group that may read ``vault.py``; a client of the
    same user without that group must not get its lines."""
    if os.getuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run processes with other groups")
    write_tree(repo, {"vault.py": "def group_secret():\n    return 'hunter2'\n"})
    os.chown(repo / "vault.py", OTHER_USER, SECRET_GROUP)
    os.chmod(repo / "vault.py", 0o640)
    member = _without_dac(str(SECRET_GROUP))
    started = _run([*member, *_cq("server", "start")], _env(runtime))
    assert started.returncode == 0, started.stderr
    argv = [*_without_dac(""), *_cq("search", "group_secret")]
    alone = _run(argv, {"CQ_SERVER": "0"}, cwd=repo)
    served = _run(argv, _env(runtime), cwd=repo)
    assert alone.returncode == 1 and b"hunter2" not in alone.stdout_bytes, alone.stderr
    _alike(served, alone)


def _other(which: int, unlimited: int) -> Callable[[], None]:
    """A soft limit other than the test's own (so other than the server's it started)."""

    def lower() -> None:
        soft, hard = resource.getrlimit(which)
        resource.setrlimit(which, (unlimited if soft == resource.RLIM_INFINITY else soft - 1, hard))

    return lower


LIMITS = {
    "ulimit-t": _other(resource.RLIMIT_CPU, 600),
    "ulimit-s": _other(resource.RLIMIT_STACK, 1 << 30),
    "ulimit-n": _other(resource.RLIMIT_NOFILE, 4096),
    "nice": lambda: os.nice(3),
}


@pytest.mark.cli_forked  # each client a fork of this process under its limit (forked_cli.py)
def test_a_client_under_other_limits_searches_in_process(repo: Path, runtime: Path) -> None:
    """A CPU limit, a stack limit, fewer descriptors or a lower priority than the server's:
    the search is the client's own, with the output it would have had. (One server for the
    four clients: what is under test is each client's, not the server's start; each client
    is a fork that sets its limit first, as ``preexec_fn`` does before an exec, so the limit
    it reads is its own process's.)"""
    _start(runtime)
    for name, limit in LIMITS.items():
        if name == "nice" and os.getpriority(os.PRIO_PROCESS, 0) > 16:
            continue  # already at the lowest priority: nice cannot make another
        before = _served(runtime)
        alone = run_cq("search", "register", cwd=repo, env={"CQ_SERVER": "0"}, preexec=limit)
        served = run_cq("search", "register", cwd=repo, env=_env(runtime), preexec=limit)
        assert alone.returncode == 0, (name, alone.stderr)
        assert _report(served) == _report(alone), (name, served.stderr)
        assert _served(runtime) == before, f"the server ran a search under {name}, not its own"
        status = run_cq("server", "status", env=_env(runtime), preexec=limit)
        assert "searches from here run in-process" in status.stdout, (
            name,
            status.stderr,
        )


FAKE_SERVER = """
import json, os, select, socket, sys
from cq.server.identity import identity
path, uid = sys.argv[1], int(sys.argv[2])
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(path)
os.chmod(path, 0o666)
os.setgroups([]); os.setgid(uid); os.setuid(uid)  # listening as another user
listener.listen(8)
welcome = {"kind": "welcome", "pid": os.getpid(), **identity()}
got = b""
print("ready", flush=True)
while True:
    ready, _, _ = select.select([listener, sys.stdin], [], [])
    if sys.stdin in ready:
        break
    conn, _ = listener.accept()
    conn.settimeout(5)
    try:
        for replies in ([welcome], [{"kind": "started"}, {"kind": "exit", "code": 0}]):
            got += conn.recv(1 << 20)  # a hello, then a search with the client's environment
            for reply in replies:
                body = json.dumps(reply).encode()
                conn.sendall(len(body).to_bytes(4, "big") + body)
    except OSError:
        pass
    conn.close()
print(len(got), flush=True)
"""


def test_a_socket_answered_by_another_user_is_refused(repo: Path, runtime: Path) -> None:
    """A listener of another uid in the runtime dir, playing a server of this cq: the client
    sends it nothing (no hello, no environment, no descriptors) and searches in-process."""
    if os.getuid() != 0:
        pytest.skip("needs root to listen as another user")
    directory = Path(_dir(runtime))
    directory.mkdir(mode=0o700, parents=True)
    directory.parent.chmod(0o700)
    fake = subprocess.Popen(
        [sys.executable, "-c", FAKE_SERVER, str(directory / "server.sock"), str(NOBODY)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert fake.stdout is not None and fake.stdout.readline() == b"ready\n"
        alone = _run(_cq("search", "register"), {"CQ_SERVER": "0"}, cwd=repo)
        served = _run(_cq("search", "register"), _env(runtime), cwd=repo)
        received, _ = fake.communicate(b"", timeout=300)
    finally:
        if fake.poll() is None:
            fake.kill()
            fake.wait()
    assert received == b"0\n", "the client talked to another user's socket"
    assert (served.returncode, _report(served)[1]) == (alone.returncode, _report(alone)[1])
    notes = served.stderr.splitlines()
    assert len(notes) == 1 and f"answered by uid {NOBODY}" in notes[0], served.stderr


def test_a_runtime_dir_others_may_rename_is_passed_over(
    repo: Path, runtime: Path, tmp_path: Path
) -> None:
    """``$XDG_RUNTIME_DIR`` writable by everyone and not sticky (anyone could swap ``cq``
    in it): the server lives in the temp dir instead, quietly."""
    os.chmod(runtime, 0o777)
    temp = Path(tempfile.mkdtemp(prefix="cqt", dir="/tmp"))
    env = {**_env(runtime), "TMPDIR": str(temp)}
    fallback = temp / f"cq-{os.getuid()}"
    try:
        started = _run(_cq("server", "start"), env)
        assert started.returncode == 0, started.stderr
        assert not (runtime / "cq").exists()
        assert list(fallback.glob("*/server.sock")), "no server in the temp dir"
        alone = _run(_cq("search", "register"), {"CQ_SERVER": "0", "TMPDIR": str(temp)}, cwd=repo)
        served = _run(_cq("search", "register"), env, cwd=repo)
        _alike(served, alone)
    finally:
        holders = [lock_holder(str(d)) for d in fallback.glob("*")]
        _run(_cq("server", "stop"), env)
        for holder in holders:
            for pid in {holder, *_children(holder)} if holder is not None else ():
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        shutil.rmtree(temp, ignore_errors=True)


RAW_CLIENT = """
import json, os, sys
from cq.server.client import hello, open_connection
from cq.server.paths import runtime_dir, socket_path
from cq.server.wire import Channel
channel = Channel(open_connection(socket_path(runtime_dir())))
welcome = hello(channel)
channel.sock.settimeout(None)  # the search is sent whatever the welcome's context says
streams = [{"fd": fd, "encoding": "utf-8", "errors": "strict", "line_buffering": False}
           for fd in (1, 2)]
search = {"kind": "search", "argv": ["search", "register"], "env": dict(os.environ),
          "cwd": os.getcwd(), "umask": 0o022, "streams": streams}
channel.send(search, [1, 2])
while (reply := channel.recv()[0]) is not None:
    print(json.dumps(reply), file=sys.stderr)
"""


def test_the_server_reads_the_client_s_context_itself(repo: Path, runtime: Path) -> None:
    """A client that sends its search whatever the server's context (not cq's client, which
    compares): the server reads the peer's context from /proc and leaves it unserved."""
    _start(runtime)
    raw = _run([sys.executable, "-c", RAW_CLIENT], _env(runtime), cwd=repo, preexec=_nice)
    assert raw.stdout_bytes == b"", "the server searched for a process of another context"
    assert '"kind": "unserved"' in raw.stderr, raw.stderr
    assert '"kind": "started"' not in raw.stderr, raw.stderr
    assert _served(runtime) == 0


def _nice() -> None:
    os.nice(3)


def _unified_cgroups() -> Path | None:
    for root in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified")):
        if (root / "cgroup.controllers").exists() and os.access(root, os.W_OK):
            return root
    return None


def test_a_client_in_a_cgroup_of_its_own_without_limits_is_served(
    repo: Path, runtime: Path
) -> None:
    """A shell in a scope of its own (a terminal tab, a tmux pane), limiting nothing: the same
    context, so its searches stay warm."""
    unified = _unified_cgroups()
    if unified is None or os.getuid() != 0:
        pytest.skip("needs root and a writable unified cgroup hierarchy")
    scope = Path(tempfile.mkdtemp(prefix="cq-scope-", dir=unified))

    def enter() -> None:
        (scope / "cgroup.procs").write_text(str(os.getpid()))

    try:
        _start(runtime)
        before = _served(runtime)
        alone = _run(_cq("search", "register"), {"CQ_SERVER": "0"}, cwd=repo, preexec=enter)
        served = _run(_cq("search", "register"), _env(runtime), cwd=repo, preexec=enter)
        _alike(served, alone)
        assert _served(runtime) == before + 1, "a scope limiting nothing was not served"
    finally:
        scope.rmdir()
