"""Warm ``cq search`` through the per-user server, in-process (``CQ_SERVER=0``) and ``rg``.

Target (issue 32): a warm identifier search through the CLI with the server <= 2x rg + 0.1 s
wall. Runs are interleaved (server, in-process, rg, ...) in one run so machine noise hits
all three alike; a private runtime dir and cache dir, warmed by two searches of each kind
first; the server is stopped at the end. Prints medians and minimums of wall seconds, the
ratios to rg, and whether the server column meets the target (by median).

    python -m bench.server_latency --exclude 'site-packages/**'   # 'register', 5 runs
    python -m bench.server_latency -q register --runs 7 -- --no-semantic
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from bench._common import cq_command, rg_binary, stdlib_dir, time_command


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-q", "--query", action="append", help="query (repeatable)")
    parser.add_argument("--root", default=stdlib_dir())
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--exclude", action="append", default=[], help="glob, for both tools")
    parser.add_argument("extra", nargs="*", help="extra cq arguments, after --")
    args = parser.parse_args()
    runtime = tempfile.mkdtemp(prefix="cqb", dir="/tmp")
    cache = tempfile.mkdtemp(prefix="cqb-cache")
    env = {"XDG_RUNTIME_DIR": runtime, "CQ_CACHE_DIR": cache}
    print(f"corpus: {args.root}  runs: {args.runs}  cq extra args: {args.extra}")
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    print(f"{'query':<12}{'kind':<12}{'median s':>10}{'min s':>8}{'/rg':>7}  target")
    try:
        started = subprocess.run([*cq_command(), "server", "start"], env={**os.environ, **env})
        if started.returncode:
            sys.exit("the server did not start")
        for query in args.query or ["register"]:
            _measure(query, args, env)
    finally:
        subprocess.run([*cq_command(), "server", "stop"], env={**os.environ, **env})
        shutil.rmtree(runtime, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


def _measure(query: str, args: argparse.Namespace, env: dict[str, str]) -> None:
    """Both tools run from the root, so an ``--exclude`` glob means the same to both."""
    search = [*cq_command(), "search", query, *args.extra]
    search += [f"--exclude={glob}" for glob in args.exclude]
    rg_argv = [rg_binary(), "--json", "-w", query, *(f"--glob=!{glob}" for glob in args.exclude)]
    kinds = {
        "server": (search, {**env, "CQ_SERVER": "1"}),
        "in-process": (search, {**env, "CQ_SERVER": "0"}),
        "rg": (rg_argv, env),
    }
    runs, root = args.runs, args.root
    outputs: dict[str, bytes] = {}
    for name, (argv, run_env) in kinds.items():  # warm-up: caches, the server's processes
        for _ in range(2):
            outputs[name] = time_command(argv, run_env, cwd=root).stdout
    if _without_run_line(outputs["server"]) != _without_run_line(outputs["in-process"]):
        print(f"{query}: the server's report differs from the in-process one (Pyrefly's")
        print("  answers: the server keeps its language server warm; --no-semantic to compare)")
    seconds: dict[str, list[float]] = {name: [] for name in kinds}
    for _ in range(runs):
        for name, (argv, run_env) in kinds.items():
            seconds[name].append(time_command(argv, run_env, cwd=root).seconds)
    rg = statistics.median(seconds["rg"])
    for name, values in seconds.items():
        median = statistics.median(values)
        verdict = ""
        if name == "server":
            limit = 2 * rg + 0.1
            verdict = f"{'met' if median <= limit else 'missed'} (<= {limit:.3f} s)"
        print(
            f"{query:<12}{name:<12}{median:>10.3f}{min(values):>8.3f}{median / rg:>7.1f}  {verdict}"
        )


def _without_run_line(report: bytes) -> bytes:
    return b"\n".join(line for line in report.split(b"\n") if not line.startswith(b"run: "))


if __name__ == "__main__":
    main()
