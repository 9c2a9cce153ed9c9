"""Peak memory of a cold one-shot audit's whole process tree, sampled from /proc every 50 ms.

Sums RSS and PSS (``/proc/PID/smaps_rollup``) over cq and every descendant (pool workers,
rg, the enrichment helper); PSS shares a forked worker's inherited pages among the sharers.

    python bench/results/2026-11-30-speed7/tree_rss.py CHECKOUT --root TREE
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time


def children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                found += [int(x) for x in fh.read().split()]
    except OSError:
        pass
    return found


def tree(pid: int) -> list[int]:
    todo, seen = [pid], []
    while todo:
        current = todo.pop()
        seen.append(current)
        todo += children(current)
    return seen


def memory(pid: int) -> tuple[int, int]:
    """RSS and PSS in KiB (0, 0 once the process is gone)."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1])
    except OSError:
        pass
    return rss, pss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout")
    parser.add_argument("--root", required=True, help="the audit tree (bench.audit_scale)")
    args = parser.parse_args()
    argv = [sys.executable, "-m", "cq", "search", "get", "--root", args.root]
    argv += ["--profile", "audit", "--format", "json"]
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "CQ_SERVER": "0", "CQ_CACHE_DIR": cache, "PYTHONPATH": args.checkout}
        proc = subprocess.Popen(argv, cwd=args.checkout, env=env, stdout=subprocess.DEVNULL)
        peak_rss = peak_pss = 0
        while proc.poll() is None:
            sizes = [memory(pid) for pid in tree(proc.pid)]
            peak_rss = max(peak_rss, sum(r for r, _ in sizes))
            peak_pss = max(peak_pss, sum(p for _, p in sizes))
            time.sleep(0.05)
    print(f"{args.checkout}: tree peak RSS {peak_rss / 1024:.0f} MB, PSS {peak_pss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
