"""Audit scale: ``cq search QUERY --profile audit`` over a ~24,000-file tree, cold and warm,
next to ``rg --json -w`` in the same run, with the peak RSS of cq's main process.

    python -m bench.audit_scale --make-tree /tmp/audit-tree      # once: stdlib + copies
    python -m bench.audit_scale --root /tmp/audit-tree --runs 3
    python -m bench.audit_scale --root /tmp/audit-tree --cq-src /tmp/base   # another checkout

``--make-tree`` copies every ``.py`` file of the running interpreter's stdlib directory
(site-packages included) to ``DIR/a`` and those of site-packages again to ``DIR/b``: on this
machine 24,916 files, ``get`` matching 37,103 times in 6,337 files (175 MB). Cold runs use an
empty cache directory each; warm runs share one filled first. RSS is the main process's own
peak (``cq_rss.py`` reads it at exit), not the pool workers'; CPU seconds (user + system) are
the main process's and the children it waited for (rg, pool workers), which hold still on a
loaded machine while wall times swing. Runs are interleaved with rg so
machine noise hits both alike; print medians and the cq/rg ratios.

``--server`` adds a cold run through the per-user server to each round: a fresh cache dir and
runtime dir, the server started (``cq server start``, not timed), then the same search by the
CLI, which the server's search process answers (issue 43: no slower than one-shot). Its CPU
seconds are the server's processes' (daemon, search process, its pool workers), read from
``/proc`` before the server is stopped; its RSS is not measured.

    python -m bench.audit_scale --root /tmp/audit-tree --runs 3 --server
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench._common import (
    median,
    rg_binary,
    scratch_dir,
    served_env,
    stdlib_dir,
    time_command,
    time_cq,
)


def make_tree(target: Path) -> None:
    stdlib = Path(stdlib_dir())
    for source, into in ((stdlib, target / "a"), (stdlib / "site-packages", target / "b")):
        for path in source.rglob("*.py"):
            if path.is_file():
                dest = into / path.relative_to(source)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, dest)
    print(f"{sum(1 for _ in target.rglob('*.py'))} files under {target}")


def run_cq(argv: list[str], cache: str, src: str | None) -> tuple[float, float, float, dict]:
    """Wall seconds, main-process peak RSS (MB), CPU seconds (user + system, the children it
    waited for included: rg, pool workers) and the JSON report of one run."""
    run = time_cq(argv, env={"CQ_CACHE_DIR": cache}, cwd=src)
    return run.seconds, run.main_rss_mb, run.cpu_seconds, json.loads(run.stdout)


def run_served(argv: list[str], src: str | None) -> tuple[float, float]:
    """Wall seconds of one cold search through a server started for it, and the CPU seconds
    of the client and the server's processes."""
    from bench.background import _family, _tree_cpu

    with scratch_dir(prefix="cqau", ignore_cleanup_errors=True) as scratch:
        env = {**os.environ, **served_env(scratch)}
        if src:
            env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
        cq = [sys.executable, "-m", "cq"]
        started = subprocess.run([*cq, "server", "start"], env=env, capture_output=True, text=True)
        pid = int(started.stdout.split("pid ")[1].split()[0].rstrip(","))
        before = _tree_cpu(pid)
        timing = time_command([*cq, *argv], env=env, cwd=src)
        cpu = _tree_cpu(pid) - before + timing.cpu_seconds
        family = _family(pid)
        subprocess.run([*cq, "server", "stop"], env=env, capture_output=True)
        while any(os.path.exists(f"/proc/{p}") for p in family):
            time.sleep(0.1)
    return timing.seconds, cpu


def run_rg(query: str, root: str) -> float:
    started = time.perf_counter()
    subprocess.run([rg_binary(), "--json", "-w", "-e", query, "."], cwd=root, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", help="the tree to search")
    parser.add_argument("--make-tree", metavar="DIR", help="build the tree and exit")
    parser.add_argument("-q", "--query", default="get")
    parser.add_argument("--profile", default="audit")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cq-src", help="run the cq package found in this checkout instead")
    parser.add_argument("--server", action="store_true", help="a cold run through the server too")
    args = parser.parse_args()
    if args.make_tree:
        make_tree(Path(args.make_tree))
        return
    argv = ["search", args.query, "--root", args.root, "--profile", args.profile]
    argv += ["--format", "json"]
    cold, cold_rss, cold_cpu, warm, warm_rss, warm_cpu, rg = [], [], [], [], [], [], []
    served, served_cpu = [], []
    with scratch_dir() as warm_cache:
        *_, data = run_cq(argv, warm_cache, args.cq_src)  # fill the warm cache
        for _ in range(args.runs):
            with scratch_dir() as cold_cache:
                seconds, rss, cpu, _ = run_cq(argv, cold_cache, args.cq_src)
            cold.append(seconds)
            cold_rss.append(rss)
            cold_cpu.append(cpu)
            rg.append(run_rg(args.query, args.root))
            seconds, rss, cpu, data = run_cq(argv, warm_cache, args.cq_src)
            warm.append(seconds)
            warm_rss.append(rss)
            warm_cpu.append(cpu)
            rg.append(run_rg(args.query, args.root))
            if args.server:
                seconds, cpu = run_served(argv, args.cq_src)
                served.append(seconds)
                served_cpu.append(cpu)
    stats = data["summary"]["stats"]
    print(
        f"tree {args.root}: {stats['scanned_files']} files, {stats['total_matches']} matches "
        f"in {stats['matched_files']} files; cq from {args.cq_src or 'this checkout'}"
    )
    rg_s = median(rg)
    print(f"{'':8}{'median s':>10}{'/ rg':>8}{'CPU s':>8}{'max main RSS MB':>17}")
    for name, runs, cpu, rss in (
        ("cold", cold, cold_cpu, cold_rss),
        ("warm", warm, warm_cpu, warm_rss),
    ):
        print(
            f"{name:8}{median(runs):>10.2f}{median(runs) / rg_s:>8.1f}{median(cpu):>8.2f}"
            f"{max(rss):>17.0f}"
        )
    if served:
        wall, cpu = median(served), median(served_cpu)
        print(f"{'server':8}{wall:>10.2f}{wall / rg_s:>8.1f}{cpu:>8.2f}")
    print(f"{'rg':8}{rg_s:>10.2f}")
    print(
        "runs (s): cold",
        [round(x, 2) for x in cold],
        "warm",
        [round(x, 2) for x in warm],
        "server",
        [round(x, 2) for x in served],
        "rg",
        [round(x, 2) for x in rg],
    )


if __name__ == "__main__":
    main()
