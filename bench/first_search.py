"""A user's first search: an empty cache and no server yet, next to ``rg --json -w``, same run.

Each run gives the search a fresh cache dir and a fresh private runtime dir (no server), so
the search through the CLI starts the per-user server and searches in-process beside its
start (``cq.server.client``): the wait a user meets once per session, or after a cache clear.
The same search with ``CQ_SERVER=0`` (one-shot, nothing started beside it) and rg follow it,
interleaved. The server each run started is stopped before the next run, and what it left
running is waited for, as is the child that stores a one-shot search's cache writes after
it has answered (``cq.cache.handoff``: off the clock, not in the next run's). Target
(issue 43): the first search <= 4x rg + 0.5 s, 'register' on the stdlib <= 1.0 s.

    python -m bench.first_search                        # 'register' on the stdlib, 5 runs
    python -m bench.first_search -q __init__ --exclude 'site-packages/**' --runs 7
    python -m bench.first_search --root /work/trees/head/moto -q get_bucket
    python -m bench.first_search --spectrum --exclude 'site-packages/**'   # the stdlib's mix
    python -m bench.first_search --spectrum --exclude 'site-packages/**' --against ../base

``--spectrum`` asks what people search first on the stdlib, from a rare function to the most
common method name: a definition with few hits, an imported class (LibCST resolves its
uses), the builtins and methods every module uses. ``--against CHECKOUT`` adds that
checkout's one-shot search (its own ``.venv``) to each run, interleaved with this one's: two
versions compared on the same machine state, the way the figures of a change are taken.

Wall seconds are medians; CPU seconds are the client's (with rg and any pool workers it
waited for), not the server's start, which runs detached beside it. Report the load
(``uptime``) with the figures: on a busy 2-core machine the server's start takes a core.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from bench._common import (
    cq_command,
    median,
    rg_binary,
    scratch_dir,
    served_env,
    settled,
    stdlib_dir,
    time_command,
)

# Rare to common: few hits and a short answer, an imported class whose uses LibCST resolves,
# then names with hundreds to thousands of hits (``__init__``: 3,672 in 699 files).
SPECTRUM = ("register_at_fork", "register", "TextIOWrapper", "Path", "compile", "get", "__init__")


def _stop_server(env: dict[str, str]) -> None:
    """Stop the server this run started and wait until its lock is free. It starts once the
    search that started it has exited: ``cq server start`` waits until it answers (or starts
    it), so its start is not left to run beside the next measurement."""
    subprocess.run([*cq_command(), "server", "start"], env=env, capture_output=True, timeout=120)
    subprocess.run([*cq_command(), "server", "stop"], env=env, capture_output=True, timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-q", "--query", action="append", help="query (repeatable)")
    parser.add_argument("--root", default=stdlib_dir())
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--exclude", action="append", default=[], help="glob, for both tools")
    parser.add_argument("--spectrum", action="store_true", help="the stdlib's mix (SPECTRUM)")
    parser.add_argument("--against", metavar="CHECKOUT", help="another cq checkout, one-shot")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    against = os.path.abspath(args.against) if args.against else None
    print(f"corpus: {root}  runs: {args.runs}  excluded: {args.exclude}")
    print(f"load: {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} (1, 5 min)")
    print(
        f"{'query':<18}{'server s':>9}{'one-shot s':>11}"
        + (f"{'against s':>10}" if against else "")
        + f"{'rg s':>7}{'server/rg':>10}{'4xrg+0.5':>9}{'met':>5}{'srv cpu':>8}{'1shot cpu':>10}"
    )
    queries = [*(SPECTRUM if args.spectrum else ()), *(args.query or ())] or ["register"]
    for query in queries:
        row = _measure(query, root, args.runs, args.exclude, against)
        rg = row["rg"]
        target = 4 * rg + 0.5
        print(
            f"{query:<18}{row['server']:>9.3f}{row['oneshot']:>11.3f}"
            + (f"{row['against']:>10.3f}" if against else "")
            + f"{rg:>7.3f}{row['server'] / rg:>10.1f}{target:>9.2f}"
            + f"{'yes' if row['server'] <= target else 'no':>5}"
            + f"{row['server_cpu']:>8.2f}{row['oneshot_cpu']:>10.2f}"
        )
    print(f"load after: {os.getloadavg()[0]:.1f}")


def _measure(
    query: str, root: str, runs: int, exclude: list[str], against: str | None
) -> dict[str, float]:
    cq_argv = [*cq_command(), "search", query, "--root", root]
    for glob in exclude:
        cq_argv += ["--exclude", glob]
    rg_argv = [rg_binary(), "--json", "-w", "-e", query, "."]
    for glob in exclude:
        rg_argv += ["-g", f"!{glob}"]
    walls: dict[str, list[float]] = {"server": [], "oneshot": [], "rg": []}
    if against is not None:
        walls["against"] = []
        against_argv = [os.path.join(against, ".venv", "bin", "python"), "-m", "cq", *cq_argv[3:]]
    cpus: dict[str, list[float]] = {"server": [], "oneshot": []}
    for _ in range(runs):
        with scratch_dir() as scratch:
            env = served_env(scratch)
            timing = time_command(cq_argv, env=env)
            _check(timing.returncode, "server")
            walls["server"].append(timing.seconds)
            cpus["server"].append(timing.cpu_seconds)
            _stop_server({**os.environ, **env})
            settled(env["CQ_CACHE_DIR"])
        with scratch_dir() as cache:
            timing = time_command(cq_argv, env={"CQ_SERVER": "0", "CQ_CACHE_DIR": cache})
            _check(timing.returncode, "one-shot")
            walls["oneshot"].append(timing.seconds)
            cpus["oneshot"].append(timing.cpu_seconds)
            settled(cache)
        if against is not None:
            with scratch_dir() as cache:
                env = {"CQ_SERVER": "0", "CQ_CACHE_DIR": cache}
                timing = time_command(against_argv, env=env, cwd=against)
                _check(timing.returncode, "other checkout's")
                walls["against"].append(timing.seconds)
        started = time.perf_counter()
        subprocess.run(rg_argv, cwd=root, capture_output=True)
        walls["rg"].append(time.perf_counter() - started)
    row = {name: median(values) for name, values in walls.items()}
    row |= {f"{name}_cpu": median(values) for name, values in cpus.items()}
    return row


def _check(returncode: int, what: str) -> None:
    """0 or 1 (nothing found: a typo's search, answered with the names nearest it)."""
    if returncode not in (0, 1):
        sys.exit(f"the {what} search failed (exit {returncode})")


if __name__ == "__main__":
    main()
