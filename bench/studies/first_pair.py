"""A first search and a second one right after it, through the CLI with the per-user server:
each one's wall time (fresh cache dir and runtime dir per run, the server stopped after).

The cost of starting the server after the first search has exited (``lifecycle.spawn``'s
``after_me``): a second search that comes at once finds no server ready and searches
in-process beside the server's start, as the first search did before.

    python -m bench.studies.first_pair --runs 4          # here, then in a base checkout
    python -m bench.studies.first_pair --runs 4 --gap 1  # the second one a second later
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time

from bench._common import cq_command, scratch_dir, served_env, stdlib_dir, time_command


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--root", default=stdlib_dir())
    parser.add_argument("--first", default="register")
    parser.add_argument("--second", default="getattr")
    parser.add_argument("--exclude", action="append", default=["site-packages/**"])
    parser.add_argument("--gap", type=float, default=0.0, help="seconds between the two")
    args = parser.parse_args()
    globs = [arg for glob in args.exclude for arg in ("--exclude", glob)]
    first = [*cq_command(), "search", args.first, "--root", args.root, *globs]
    second = [*cq_command(), "search", args.second, "--root", args.root, *globs]
    walls: tuple[list[float], list[float]] = ([], [])
    print(f"load: {os.getloadavg()[0]:.1f}; gap {args.gap:g} s")
    for _ in range(args.runs):
        with scratch_dir() as scratch:
            env = served_env(scratch)
            walls[0].append(time_command(first, env=env).seconds)
            time.sleep(args.gap)
            walls[1].append(time_command(second, env=env).seconds)
            full = {**os.environ, **env}
            subprocess.run([*cq_command(), "server", "start"], env=full, capture_output=True)
            subprocess.run([*cq_command(), "server", "stop"], env=full, capture_output=True)
    both = [a + b for a, b in zip(*walls, strict=True)]
    print(
        f"first {statistics.median(walls[0]):.2f} s, second {statistics.median(walls[1]):.2f} s,"
        f" both {statistics.median(both):.2f} s; runs {[round(x, 2) for x in walls[0]]}"
        f" {[round(x, 2) for x in walls[1]]}"
    )
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
