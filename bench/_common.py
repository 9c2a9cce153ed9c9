"""Helpers shared by the benchmark scripts: where the stdlib is, how to time a command."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path


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
    peak RSS of one child process. CPU time barely moves when other work shares the cores."""

    def __init__(
        self, seconds: float, max_rss_mb: float, returncode: int, stdout: bytes, cpu: float = 0.0
    ) -> None:
        self.seconds = seconds
        self.cpu_seconds = cpu
        self.max_rss_mb = max_rss_mb
        self.returncode = returncode
        self.stdout = stdout


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


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")
