"""Shared test helpers: build small fixture repositories and run the real ``cq`` CLI."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import cq

# Every cq these tests start (``python -m cq``, the ``cq`` script, a server) runs the code this
# process imported. ``python -m`` puts the working directory first on ``sys.path``: from the
# checkout that is the checkout's cq, from anywhere else the installed one, which after a
# plain ``pip install .`` is another copy (another install, another server directory) than
# the one the tests compare with.
_TESTED = str(Path(cq.__file__).resolve().parent.parent)
os.environ["PYTHONPATH"] = os.pathsep.join(
    [_TESTED, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
)
# With ``PYTHONDONTWRITEBYTECODE`` set (as on some CI machines), every interpreter the tests
# start compiled the checkout's cq from source again: about half the CPU of a small
# ``python -m cq search``, over ~1,000 starts a run. They keep it as Python does by default, in
# the checkout's ``__pycache__`` (gitignored); what runs is the same code. (Not
# ``PYTHONPYCACHEPREFIX``: it moves the lookup of the installed packages' bytecode too, and
# every interpreter compiled those instead.) This process too, from here on: the test modules
# pytest rewrites, and what a ``cli_forked`` child imports that this process has not yet.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


def fuzz_examples(count: int) -> int:
    """A fuzz test's number of examples in the suite's run: what shows its property over the
    examples hypothesis derives (``derandomize``: the same ones every run). A deeper search
    for rarer inputs, by hand: ``CQ_TEST_FUZZ_SCALE=10`` runs ten times as many."""
    return max(1, round(count * float(os.environ.get("CQ_TEST_FUZZ_SCALE", "1"))))


class CqRun:
    """The outcome of one ``cq`` subprocess."""

    def __init__(self, proc: subprocess.CompletedProcess[bytes]) -> None:
        self.returncode = proc.returncode
        self.stdout_bytes = proc.stdout
        self.stdout = proc.stdout.decode("utf-8", errors="replace")
        self.stderr = proc.stderr.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return json.loads(self.stdout)


# A tree of upload modules for the index tests: one question about them, many files saying it.
UPLOAD_MODULE = '''"""Uploads of module {i}."""


class UploadHandler{i}:
    """Receive the chunks of an upload and store them."""

    def receive_chunk(self, chunk):
        return chunk

    def file_complete(self, size):
        return size
'''
UPLOAD_QUESTION = "where are the chunks of an upload received?"


def run_cq(
    *args: str,
    cwd: Path | None = None,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 600,
    preexec: Callable[[], None] | None = None,
) -> CqRun:
    """Run the real ``cq`` CLI on ``args``: ``python -m cq`` as a subprocess, or, in a test
    marked ``cli_forked`` (see ``forked_cli.py``), ``cq.cli.main`` in a fork of this process.
    ``timeout`` only ends a run gone wrong: a search that waits for Pyrefly on a loaded machine
    can take minutes, and no test asserts a time by it. ``preexec`` runs in cq's process
    before cq does (``subprocess``'s ``preexec_fn``: a limit, a dropped capability)."""
    full_env = {**os.environ, **(env or {})}
    full_env.pop("CQ_FORMAT", None) if env is None or "CQ_FORMAT" not in env else None
    data = stdin.encode() if stdin is not None else None
    if full_env.pop(FORKED, None):
        from forked_cli import run_forked

        code, out, err = run_forked(list(args), cwd, data, full_env, timeout, preexec)
        return CqRun(subprocess.CompletedProcess(args, code, out, err))
    proc = subprocess.run(
        [sys.executable, "-m", "cq", *args],
        cwd=cwd,
        input=data,
        capture_output=True,
        env=full_env,
        timeout=timeout,
        preexec_fn=preexec,
    )
    return CqRun(proc)


def path_with_cq() -> str:
    """``PATH`` with this cq's script directory first: a machine where ``cq`` is on PATH, as
    the files of a project install expect (``cq agent install --project``)."""
    return os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


# Set (in the environment: this module is also imported as ``tests.conftest``) for the tests
# marked ``cli_forked``: logic tests of what the CLI prints, whose process is nothing they test
# (its start, signals, closed streams stay with ``python -m cq``).
FORKED = "CQ_TEST_CLI_FORKED"


def _forks(node: pytest.Item | pytest.Module) -> bool:
    # CQ_TEST_NO_FORK=1 runs them as subprocesses too (to compare, or to rule the fork out);
    # a test marked ``cli_subprocess`` in a forked module tests the process's own start
    return bool(
        node.get_closest_marker("cli_forked")
        and not node.get_closest_marker("cli_subprocess")
        and not os.environ.get("CQ_TEST_NO_FORK")
    )


@pytest.fixture(autouse=True)
def _cli_forked(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if _forks(request.node):
        monkeypatch.setenv(FORKED, "1")
    else:  # the module's own fixtures may fork (``_module_isolated``), this test does not
        monkeypatch.delenv(FORKED, raising=False)


def run_hooked(hook: str, *args: str, env: dict[str, str] | None = None) -> CqRun:
    """Run the real CLI in a subprocess with a test-only hook from ``hooked_cq.py``."""
    script = Path(__file__).parent / "hooked_cq.py"
    proc = subprocess.run(
        [sys.executable, str(script), hook, *args],
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=600,  # only ends a run gone wrong, as run_cq's
    )
    return CqRun(proc)


def cache_settled(cache: Path) -> None:
    """Wait until the writer a one-shot cq left (``cq.cache.handoff``: it stores the search's
    cache after cq has exited) is done with ``cache``: what a test reads of the cache dir
    itself, rather than through another cq (which waits for it too), is then final."""
    import fcntl

    from cq.cache.sharing import WRITER_LOCK_NAME

    try:
        fd = os.open(cache / WRITER_LOCK_NAME, os.O_RDONLY)
    except FileNotFoundError:
        return  # no cq has written there
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
    finally:
        os.close(fd)


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Create files (text or bytes) under root; returns root."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def word_tree(base: Path, n: int) -> Path:
    """``base/tree<n>``: 30 modules of functions named with words of this tree's own (an
    index of ~0.25 MB), the same for the same ``n``."""
    rng = random.Random(n)
    files = {}
    for m in range(30):
        words = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=9)) for _ in range(40)]
        files[f"pkg/m{m}.py"] = "".join(
            f'def {word}_{i}(record):\n    """{" ".join(rng.sample(words, 8))}."""\n'
            f"    return record.{rng.choice(words)}() + {i}\n\n\n"
            for i, word in enumerate(words)
        )
    return write_tree(base / f"tree{n}", files)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Under xdist, ``--dist worksteal`` unless told otherwise: a worker whose tests ran out
    takes a share of another's, so the long tests do not leave one worker running alone."""
    if config.pluginmanager.hasplugin("xdist") and config.option.dist == "no":
        config.option.dist = "worksteal"


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: one worker more than the machine has cores. A worker spends part of its
    time waiting, not computing (a deadline waited out, a server's start, a search process's
    exit), and a core left idle meanwhile is the suite's wall time; a third worker on two
    cores fills those gaps. ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides when set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (cores or 1) + 1


# The run's temporary directories (every test's tree, cache dir and index) go to a RAM disk
# when the machine has one with room: a search's sqlite and tantivy commits sync to disk
# dozens of times (51 fdatasync calls for a small question), which on a disk is kernel time
# and waiting (a forked question: 0.15 -> 0.12 CPU-s, and a third less wall time, on tmpfs).
# What the tests check does not depend on the disk; ``--basetemp`` still decides when given.
RAM_DIR = "/dev/shm"
RAM_ROOM = 2 << 30  # bytes free that a run's directories (~350 MB) leave plenty of


def _ram_basetemp() -> str | None:
    try:
        room = os.statvfs(RAM_DIR)
    except OSError:
        return None
    if room.f_bavail * room.f_frsize < RAM_ROOM or not os.access(RAM_DIR, os.W_OK):
        return None
    import tempfile

    return tempfile.mkdtemp(prefix="cq-tests-", dir=RAM_DIR)


_RAM_BASETEMP = pytest.StashKey[str]()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """The controller's (or a lone run's) basetemp on the RAM disk, before pytest's tmp_path
    factory reads the option; xdist gives each worker a directory inside it."""
    if hasattr(config, "workerinput") or config.option.basetemp:
        return
    if (chosen := _ram_basetemp()) is not None:
        config.option.basetemp = chosen
        config.stash[_RAM_BASETEMP] = chosen


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A RAM disk's directory is memory: a run that passed takes it away (a failed one
    keeps it to look at, as pytest keeps its last directories on disk)."""
    chosen = session.config.stash.get(_RAM_BASETEMP, None)
    if chosen is not None and exitstatus == 0:
        import shutil

        session.config.add_cleanup(lambda: shutil.rmtree(chosen, ignore_errors=True))


# (in the environment: the fuzz tests import this module as ``tests.conftest``, another copy)
SCRATCH = "CQ_TEST_SCRATCH"


def scratch() -> str | None:
    """The directory for a test's own ``tempfile`` directories (the fuzz tests' trees and
    caches, one per example): beside its ``tmp_path`` when the run's basetemp is on the RAM
    disk, else ``tempfile``'s default."""
    return os.environ.get(SCRATCH) or None


@pytest.fixture(scope="session", autouse=True)
def _scratch_in_basetemp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    if not str(tmp_path_factory.getbasetemp()).startswith(RAM_DIR + os.sep):
        yield
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(SCRATCH, str(tmp_path_factory.mktemp("scratch")))
        yield


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Under xdist, the controller compiles what every worker would otherwise compile at once
    from a fresh clone, before the workers start (xdist starts them after this hook): cq's
    modules (the ``__pycache__`` every later interpreter reads) and the test modules pytest
    rewrites. Each of the three workers rewrote all of them, ~6 CPU-s each, and compiled
    cq's sources again."""
    config = session.config
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    import compileall

    compileall.compile_dir(os.path.join(_TESTED, "cq"), quiet=1, workers=0)
    _rewrite_tests(config)


def _rewrite_tests(config: pytest.Config) -> None:
    """Write pytest's rewritten pyc of each test module that has none, as its import would.
    These are pytest's own internals: if they moved, the workers rewrite them as before."""
    try:
        from _pytest.assertion import rewrite

        state = config.stash[rewrite.assertstate_key]
        here = Path(__file__).parent
        for path in [*sorted(here.glob("test_*.py")), here / "conftest.py"]:
            pyc = rewrite.get_cache_dir(path) / (path.name[:-3] + rewrite.PYC_TAIL)
            if rewrite._read_pyc(path, pyc) is None and rewrite.try_makedirs(pyc.parent):
                source_hash, code = rewrite._rewrite_test(path, config)
                rewrite._write_pyc(state, code, source_hash, pyc)
    except (ImportError, AttributeError, KeyError, TypeError):
        return


@pytest.fixture(scope="module")
def _module_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cq-module-cache")


@pytest.fixture(scope="module", autouse=True)
def _module_isolated(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """The environment a module's own fixtures run cq in. They are set up before any test's
    ``_isolated_cache`` and ``_cli_forked``: without this, a module-scoped fixture's cq ran
    in the runner's environment (its user's cache dir and server, the LLM it names) and, in
    a ``cli_forked`` module, as a subprocess. Each test then gets its own as before."""
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, request.getfixturevalue("_module_cache"), tmp_path_factory.mktemp("xdg-conf"))
        if _forks(request.node):
            mp.setenv(FORKED, "1")
        yield


def isolate(monkeypatch: pytest.MonkeyPatch, cache: Path, config: Path) -> None:
    """The environment every test's cq runs in (``_isolated_cache``); a module-scoped fixture
    that runs cq before the tests' own fixtures do sets it up with this too."""
    monkeypatch.setenv("CQ_CACHE_DIR", str(cache))
    monkeypatch.delenv("CQ_FORMAT", raising=False)
    monkeypatch.delenv("CQ_ROOT", raising=False)
    # No LLM server is reachable in tests unless a test starts one on loopback, and no user
    # config file (``$XDG_CONFIG_HOME/cq/config.toml``) of the machine applies.
    monkeypatch.setenv("CQ_LLM_URL", "http://127.0.0.1:9/")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    # The Pyrefly stage is off unless a test turns it on (tests/test_semantic*.py do, with
    # their own budget): its answers depend on a server's speed on a shared machine, and a
    # server per test root cost each search its start-up; every other stage runs as usual.
    monkeypatch.setenv("CQ_SEMANTIC", "0")
    # No search goes to a per-user server (a daemon outliving the run, shared across tests
    # with their own cache dirs); tests/test_server.py turns it on with a runtime dir of its own.
    monkeypatch.setenv("CQ_SERVER", "0")
    # No enrichment standby unless a test asks for one (tests/test_enrich_standby.py): by
    # default one is forked only while a core is idle, which on a shared machine changes
    # from one instant to the next, and with it the processes, counters and cache entries
    # a search leaves.
    monkeypatch.setenv("CQ_STANDBY", "off")


@pytest.fixture(autouse=True)
def _isolated_cache(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
):
    """Every test gets its own cq cache dir, so tests never share or pollute a real cache;
    the tests of a module marked ``shared_cache`` (searches of one read-only tree, asserting
    nothing of the cache) share their module's, warm after the first search."""
    if request.node.get_closest_marker("shared_cache"):
        cache = request.getfixturevalue("_module_cache")
    else:
        cache = tmp_path_factory.mktemp("cq-cache")
    isolate(monkeypatch, cache, tmp_path_factory.mktemp("xdg-config"))
    yield cache


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project an agent works in (the installer tests' cwd)."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "app.py").write_text("def main():\n    pass\n")
    return project


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home directory of its own, handed to the CLI as ``HOME``."""
    home = tmp_path / "home"
    home.mkdir()
    return home
