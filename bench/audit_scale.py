"""Audit scale: ``cq search QUERY --profile audit`` over a ~24,000-file tree, cold and warm,
next to ``rg --json -w`` in the same run, with the peak RSS of cq's main process.

    python bench/audit_scale.py --make-tree /tmp/audit-tree      # once: stdlib + copies
    python bench/audit_scale.py --root /tmp/audit-tree --runs 3
    python bench/audit_scale.py --root /tmp/audit-tree --cq-src /tmp/base   # another checkout

``--make-tree`` copies every ``.py`` file of the running interpreter's stdlib directory
(site-packages included) to ``DIR/a`` and those of site-packages again to ``DIR/b``: on this
machine 24,916 files, ``get`` matching 37,103 times in 6,337 files (175 MB). Cold runs use an
empty cache directory each; warm runs share one filled first. RSS is the main process's own
peak (``cq_rss.py`` reads it at exit), not the pool workers'. Runs are interleaved with rg so
machine noise hits both alike; print medians and the cq/rg ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import median, rg_binary, stdlib_dir

_WRAPPER = str(Path(__file__).parent / "cq_rss.py")


def make_tree(target: Path) -> None:
    stdlib = Path(stdlib_dir())
    for source, into in ((stdlib, target / "a"), (stdlib / "site-packages", target / "b")):
        for path in source.rglob("*.py"):
            if path.is_file():
                dest = into / path.relative_to(source)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, dest)
    print(f"{sum(1 for _ in target.rglob('*.py'))} files under {target}")


def run_cq(argv: list[str], cache: str, src: str | None) -> tuple[float, float, dict]:
    env = {**os.environ, "CQ_CACHE_DIR": cache}
    if src:
        env["PYTHONPATH"] = src
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, _WRAPPER, *argv], capture_output=True, env=env, cwd=src or None
    )
    seconds = time.perf_counter() - started
    rss = next(
        float(line.split()[1])
        for line in proc.stderr.decode().splitlines()
        if line.startswith("maxrss_mb ")
    )
    return seconds, rss, json.loads(proc.stdout)


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
    args = parser.parse_args()
    if args.make_tree:
        make_tree(Path(args.make_tree))
        return
    argv = ["search", args.query, "--root", args.root, "--profile", args.profile]
    argv += ["--format", "json"]
    cold, cold_rss, warm, warm_rss, rg = [], [], [], [], []
    with tempfile.TemporaryDirectory() as warm_cache:
        _, _, data = run_cq(argv, warm_cache, args.cq_src)  # fill the warm cache
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as cold_cache:
                seconds, rss, _ = run_cq(argv, cold_cache, args.cq_src)
            cold.append(seconds)
            cold_rss.append(rss)
            rg.append(run_rg(args.query, args.root))
            seconds, rss, data = run_cq(argv, warm_cache, args.cq_src)
            warm.append(seconds)
            warm_rss.append(rss)
            rg.append(run_rg(args.query, args.root))
    stats = data["summary"]["stats"]
    print(
        f"tree {args.root}: {stats['scanned_files']} files, {stats['total_matches']} matches "
        f"in {stats['matched_files']} files; cq from {args.cq_src or 'this checkout'}"
    )
    rg_s = median(rg)
    print(f"{'':8}{'median s':>10}{'/ rg':>8}{'max main RSS MB':>17}")
    print(f"{'cold':8}{median(cold):>10.2f}{median(cold) / rg_s:>8.1f}{max(cold_rss):>17.0f}")
    print(f"{'warm':8}{median(warm):>10.2f}{median(warm) / rg_s:>8.1f}{max(warm_rss):>17.0f}")
    print(f"{'rg':8}{rg_s:>10.2f}")
    print(
        "runs (s): cold",
        [round(x, 2) for x in cold],
        "warm",
        [round(x, 2) for x in warm],
        "rg",
        [round(x, 2) for x in rg],
    )


if __name__ == "__main__":
    main()
