"""Memory of the per-user server over many roots, after the last search, and its latency.

Target (issue 41): 40 different roots searched through the server (an identifier and a
question in each): the server's processes together <= 1.5 GB resident, the search processes
<= 600 MB; 120 s after the last search <= 400 MB; a warm identifier search still <= 2x rg +
0.1 s (median, interleaved with rg in the same run). A private runtime dir and cache dir;
the server is stopped at the end.

Roots: directories of Python packages under ``--trees`` (default $CQ_BENCH_TREES: each
tree's package dirs with at least ``--min-files`` Python files, taken round-robin over the
trees so neighbours differ), or every directory given with ``--root``. Each root's identifier
is the first function its first Python file defines; its question asks where that name's
words are handled. Memory is read from ``/proc`` after each root (the daemon, the search
processes with their classification workers, Pyrefly; ``cq.server.memory``), then every
10 s for ``--after`` seconds.

    python -m bench.server_memory --roots 40
    python -m bench.server_memory --root $CQ_BENCH_TREES/ignite --root $CQ_BENCH_TREES/torchio
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._common import cq_command, rg_binary, time_command
from cq.server.memory import Memory, descendants, measure

_DEF = re.compile(r"^def ([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\(", re.M)
_MB = 1 << 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", default=os.environ.get("CQ_BENCH_TREES"))
    parser.add_argument("--root", action="append", default=[], help="a root (repeatable)")
    parser.add_argument("--roots", type=int, default=40)
    parser.add_argument("--min-files", type=int, default=8)
    parser.add_argument("--after", type=float, default=130.0, help="s watched after the last")
    parser.add_argument("--runs", type=int, default=5, help="latency runs (interleaved with rg)")
    parser.add_argument("--cq-checkout", help="run another checkout's cq (before/after)")
    args = parser.parse_args()
    if not args.root and not args.trees:
        parser.error("give --root DIR ... or --trees DIR (or $CQ_BENCH_TREES)")
    roots = [Path(r) for r in args.root] or _pick_roots(Path(args.trees), args)
    runtime = tempfile.mkdtemp(prefix="cqb", dir="/tmp")
    cache = tempfile.mkdtemp(prefix="cqb-cache")
    env = {**os.environ, "XDG_RUNTIME_DIR": runtime, "CQ_CACHE_DIR": cache, "CQ_SERVER": "1"}
    if args.cq_checkout:
        env["PYTHONPATH"] = args.cq_checkout
    print(f"roots: {len(roots)}  cq: {args.cq_checkout or 'this checkout'}")
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    try:
        started = subprocess.run(  # from "/": no checkout's cq before the one asked for
            [*cq_command(), "server", "start"], env=env, capture_output=True, cwd="/"
        )
        if started.returncode:
            sys.exit(f"the server did not start: {started.stderr.decode()}")
        daemon = int(started.stdout.split()[-1])
        _serve_roots(roots, env, daemon)
        _latency(roots[-1], env, args.runs)
        _watch_after(daemon, args.after)
    finally:
        subprocess.run([*cq_command(), "server", "stop"], env=env, capture_output=True, cwd="/")
        shutil.rmtree(runtime, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


def _pick_roots(trees: Path, args: argparse.Namespace) -> list[Path]:
    """Package dirs (depth 1-3) with enough Python files, round-robin over the trees."""
    per_tree: list[list[Path]] = []
    for tree in sorted(p for p in trees.iterdir() if p.is_dir()):
        found = []
        for directory in sorted(tree.glob("*/*")) + sorted(tree.glob("*/*/*")):
            package = directory.is_dir() and (directory / "__init__.py").is_file()
            if package and len(list(directory.rglob("*.py"))) >= args.min_files:
                found.append(directory)
        if found:
            per_tree.append(found)
    picked: list[Path] = []
    while len(picked) < args.roots and any(per_tree):
        for found in per_tree:
            if found and len(picked) < args.roots:
                picked.append(found.pop(0))
    return picked


def _identifier(root: Path) -> str:
    for path in sorted(root.rglob("*.py")):
        with open(path, encoding="utf-8", errors="replace") as fh:
            if found := _DEF.search(fh.read()):
                return found.group(1)
    return "main"


def _workers(daemon: int) -> list[int]:
    """The daemon's search processes (its direct children)."""
    children = []
    for pid in descendants(daemon):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"cq.server.worker" in cmdline:
            children.append(pid)
    return children


def _sample(daemon: int) -> Memory:
    """What ``cq server status`` shows, read from here (the daemon is not this process)."""
    here = measure(_workers(daemon))
    from cq.server.memory import rss

    return Memory(daemon=rss(daemon), workers=here.workers, pyrefly=here.pyrefly)


def _total(memory: Memory) -> int:
    return memory.daemon + memory.workers + memory.pyrefly


def _serve_roots(roots: list[Path], env: dict[str, str], daemon: int) -> None:
    print(f"{'#':>3} {'root':<48}{'total MB':>9}{'workers':>8}{'pyrefly':>8}{'s':>6}")
    peak_total = peak_workers = 0
    failures = 0
    for n, root in enumerate(roots, 1):
        name = _identifier(root)
        question = f"where is {name.replace('_', ' ')} handled?"
        began = time.monotonic()
        for query in (name, question):
            run = subprocess.run(
                [*cq_command(), "search", query], cwd=root, env=env, capture_output=True
            )
            failures += run.returncode not in (0, 1) or b"cq server" in run.stderr
        seconds = time.monotonic() - began
        memory = _sample(daemon)
        peak_total = max(peak_total, _total(memory))
        peak_workers = max(peak_workers, memory.workers)
        label = str(root)[-47:]
        print(
            f"{n:>3} {label:<48}{_total(memory) / _MB:>9.0f}{memory.workers / _MB:>8.0f}"
            f"{memory.pyrefly / _MB:>8.0f}{seconds:>6.1f}"
        )
    print(
        f"peak: total {peak_total / _MB:.0f} MB (target <= 1536: "
        f"{'met' if peak_total <= 1536 * _MB else 'missed'}), search processes "
        f"{peak_workers / _MB:.0f} MB (target <= 600: "
        f"{'met' if peak_workers <= 600 * _MB else 'missed'}); searches that failed or "
        f"bypassed the server: {failures}"
    )


def _latency(root: Path, env: dict[str, str], runs: int) -> None:
    """A warm identifier search through the server against rg, interleaved, from ``root``."""
    name = _identifier(root)
    kinds = {
        "server": [*cq_command(), "search", name],
        "rg": [rg_binary(), "--json", "-w", name],
    }
    seconds: dict[str, list[float]] = {kind: [] for kind in kinds}
    for argv in kinds.values():
        time_command(argv, env, cwd=str(root))  # warm
    for _ in range(runs):
        for kind, argv in kinds.items():
            seconds[kind].append(time_command(argv, env, cwd=str(root)).seconds)
    server, rg = statistics.median(seconds["server"]), statistics.median(seconds["rg"])
    limit = 2 * rg + 0.1
    print(
        f"latency ({name} in {root}): server {server:.3f} s, rg {rg:.3f} s, "
        f"{'met' if server <= limit else 'missed'} (<= {limit:.3f} s)"
    )


def _watch_after(daemon: int, after: float) -> None:
    began = time.monotonic()
    at_120 = None
    while (elapsed := time.monotonic() - began) <= after:
        memory = _sample(daemon)
        print(
            f"after {elapsed:5.0f} s: total {_total(memory) / _MB:.0f} MB (daemon "
            f"{memory.daemon / _MB:.0f}, search processes {memory.workers / _MB:.0f}, "
            f"Pyrefly {memory.pyrefly / _MB:.0f})"
        )
        if elapsed >= 120 and at_120 is None:
            at_120 = _total(memory)
        time.sleep(10)
    if at_120 is not None:
        verdict = "met" if at_120 <= 400 * _MB else "missed"
        print(f"120 s after the last search: {at_120 / _MB:.0f} MB (target <= 400: {verdict})")


if __name__ == "__main__":
    main()
