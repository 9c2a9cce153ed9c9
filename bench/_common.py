"""Helpers shared by the benchmark scripts: where the stdlib is, how to time a command."""

from __future__ import annotations

import contextlib
import os
import random
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# The benches measure the search each cq process runs itself: a background server would carry
# warm state from one measured run into the next (and be replaced whenever a run's cache dir
# or checkout differs). bench/server_latency.py turns it on for the runs it measures.
os.environ.setdefault("CQ_SERVER", "0")


# Directories that exist on one machine are never defaults: a bench that needs one takes it
# as an argument, defaulting to one of these environment variables where it is set.
EVAL_TREES = "CQ_BENCH_EVAL_TREES"  # trees at the issues' base commits (prepare_eval_trees.py)
HEAD_TREES = "CQ_BENCH_TREES"  # the tuning repositories at a recent commit, DIR/<name>
MIRRORS = "CQ_BENCH_MIRRORS"  # bare mirrors, DIR/<owner>+<name>/repo
INDEX_TREE = "CQ_BENCH_INDEX_TREE"  # the ~2,500-file tree of index_speed.py


@contextlib.contextmanager
def scratch_dir(**kwargs: Any) -> Iterator[str]:
    """``tempfile.TemporaryDirectory``'s directory, removed once the cq runs that used it
    (as their cache dir, or one under it) are done with it: a one-shot cq hands its cache
    writes to a child that stores them after cq has exited (``cq.cache.handoff``), and a
    directory removed under it fails ("Directory not empty") or is written again."""
    with tempfile.TemporaryDirectory(**kwargs) as scratch:
        try:
            yield scratch
        finally:
            settled(scratch)


def settled(directory: str) -> None:
    """Wait for every cq cache writer still storing under ``directory``."""
    from cq.cache.schema import FILE_NAME
    from cq.cache.sharing import WRITER_LOCK_NAME, wait_for_writer

    for lock in Path(directory).rglob(WRITER_LOCK_NAME):
        wait_for_writer(lock.with_name(FILE_NAME))


def sample_arguments(parser: Any, *, places: bool) -> None:
    """A study's sample: ``--root`` (the stdlib), ``--files``, ``--places`` a file, ``--seed``."""
    parser.add_argument("--root", default=stdlib_dir())
    parser.add_argument("--files", type=int, default=600, help="files sampled")
    if places:
        parser.add_argument("--places", type=int, default=40, help="places sampled a file")
    parser.add_argument("--seed", type=int, default=1)


def sampled_python_files(root: str, count: int, seed: int) -> tuple[list[str], random.Random]:
    """``count`` of ``root``'s Python files (rg's list, sorted, then sampled by ``seed``), and
    the generator that sampled them, for the places in each."""
    listed = subprocess.run([rg_binary(), "--files", "-t", "py", root], capture_output=True)
    files = sorted(listed.stdout.decode(errors="replace").splitlines())
    rng = random.Random(seed)
    return rng.sample(files, min(count, len(files))), rng


def dir_argument(parser: Any, flag: str, env: str, help: str) -> None:
    """``flag DIR``, defaulting to ``$env``; required when that is unset, so no bench reads a
    path that exists on one machine only."""
    default = os.environ.get(env) or None
    parser.add_argument(
        flag, default=default, required=default is None, metavar="DIR", help=f"{help} (${env})"
    )


def stdlib_dir() -> str:
    """The Python standard library directory: real code every machine has."""
    return sysconfig.get_paths()["stdlib"]


def rg_binary() -> str:
    beside = Path(sys.executable).parent / "rg"
    return str(beside) if beside.exists() else "rg"


def cq_command() -> list[str]:
    return [sys.executable, "-m", "cq"]


class Timing:
    """Wall time, CPU time (user + system, with the children it waited for: rg, workers) and
    peak RSS of one child process. CPU time barely moves when other work shares the cores.
    ``max_rss_mb`` is what ``wait4`` reports: the larger of the process's own peak and those
    of the children it reaped (Pyrefly's, in a search with the semantic stage); a command run
    through ``cq_rss.py`` (``time_cq``) also has the two apart, ``main_rss_mb`` and
    ``children_rss_mb`` (the largest child), else they are 0."""

    def __init__(
        self,
        seconds: float,
        max_rss_mb: float,
        returncode: int,
        stdout: bytes,
        cpu: float = 0.0,
        main_rss_mb: float = 0.0,
        children_rss_mb: float = 0.0,
    ) -> None:
        self.seconds = seconds
        self.cpu_seconds = cpu
        self.max_rss_mb = max_rss_mb
        self.returncode = returncode
        self.stdout = stdout
        self.main_rss_mb = main_rss_mb
        self.children_rss_mb = children_rss_mb


def served_env(scratch: str) -> dict[str, str]:
    """The environment of searches through a server of their own: its runtime dir (made
    here, mode 0700, as the server requires) and its cache dir inside ``scratch``."""
    run_dir = os.path.join(scratch, "run")
    os.mkdir(run_dir, 0o700)
    return {
        "CQ_SERVER": "1",
        "XDG_RUNTIME_DIR": run_dir,
        "CQ_CACHE_DIR": os.path.join(scratch, "cache"),
    }


def time_command(
    argv: list[str], env: dict[str, str] | None = None, cwd: str | None = None
) -> Timing:
    """Run argv to completion, capturing stdout; wall time and the child's peak RSS."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    return Timing(seconds, usage.ru_maxrss / 1024, proc.returncode, out, cpu)


_CQ_RSS = str(Path(__file__).parent / "cq_rss.py")


def time_cq(args: list[str], env: dict[str, str] | None = None, cwd: str | None = None) -> Timing:
    """``cq ARGS`` run through ``cq_rss.py``: as ``time_command``, with the main process's
    peak RSS and its largest child's apart (from the two lines it writes on stderr)."""
    env = {**os.environ, **(env or {})}
    if cwd:  # as ``python -m cq`` run there would: that checkout's cq first
        env["PYTHONPATH"] = os.pathsep.join(p for p in (cwd, env.get("PYTHONPATH")) if p)
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [sys.executable, _CQ_RSS, *args], stdout=subprocess.PIPE, stderr=err, env=env, cwd=cwd
        )
        out = proc.stdout.read() if proc.stdout else b""
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        err.seek(0)
        peaks = dict(
            line.split() for line in err.read().decode().splitlines() if "maxrss_mb " in line
        )
    return Timing(
        seconds,
        usage.ru_maxrss / 1024,
        os.waitstatus_to_exitcode(status),
        out,
        usage.ru_utime + usage.ru_stime,
        main_rss_mb=float(peaks.get("maxrss_mb", 0)),
        children_rss_mb=float(peaks.get("children_maxrss_mb", 0)),
    )


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")
