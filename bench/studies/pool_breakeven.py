"""Where does the classification process pool pay for itself on this machine?

For queries that touch more and more files, times a cold (empty cache) search with the pool
forced off (``CQ_POOL_MIN_BYTES`` huge) and forced on (``CQ_POOL_MIN_BYTES=1``), interleaved,
median of N runs, and prints the bytes parsed. The default threshold in ``cq/classify/pool.py``
should sit where the two columns cross.

    python -m bench.studies.pool_breakeven --runs 3
"""

from __future__ import annotations

import argparse
import json

from bench._common import cq_command, median, scratch_dir, stdlib_dir, time_command

QUERIES = ("sched", "getpass", "register", "warn", "__init__")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=stdlib_dir())
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("-q", "--query", action="append")
    args = parser.parse_args()
    print(f"{'query':<12}{'files':>7}{'MB':>7}{'serial s':>10}{'pool s':>9}{'workers':>9}")
    for query in args.query or QUERIES:
        serial, pooled, files, size, workers = [], [], 0, 0.0, 0
        for _ in range(args.runs):
            for label, threshold in (("serial", "999999999999"), ("pool", "1")):
                with scratch_dir() as cache:
                    argv = [
                        *cq_command(),
                        "search",
                        query,
                        "--root",
                        args.root,
                        "--exclude",
                        "site-packages/**",
                        "--format",
                        "json",
                        "--limit",
                        "1",
                    ]
                    t = time_command(
                        argv, env={"CQ_CACHE_DIR": cache, "CQ_POOL_MIN_BYTES": threshold}
                    )
                data = json.loads(t.stdout)
                files = data["summary"]["stats"]["matched_files"]
                size = _bytes(args.root, data) / 1e6
                (serial if label == "serial" else pooled).append(t.seconds)
                if label == "pool":
                    workers = data["run"]["counters"].get("pool_workers", 0)
        print(
            f"{query:<12}{files:>7}{size:>7.1f}{median(serial):>10.2f}{median(pooled):>9.2f}"
            f"{workers:>9}"
        )


def _bytes(root: str, data: dict) -> int:
    """Source bytes the search had to parse (one run with every finding listed)."""
    import os
    import subprocess

    query = data["summary"]["query"]
    out = subprocess.run(
        [
            *cq_command(),
            "search",
            query,
            "--root",
            root,
            "--exclude",
            "site-packages/**",
            "--format",
            "json",
            "--limit",
            "0",
        ],
        capture_output=True,
        text=True,
    ).stdout
    files = {f["file"] for f in json.loads(out)["findings"]}
    return sum(os.path.getsize(os.path.join(root, f)) for f in files)


if __name__ == "__main__":
    main()
