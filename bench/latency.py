"""Latency of ``cq search`` against ``rg --json -w`` on the same query and corpus, same run.

Runs are interleaved (cq, rg, cq, rg, ...) so machine noise hits both alike. Prints medians of
wall time and of CPU time (user + system, children included: on a shared, loaded machine the
CPU seconds stay put while wall times swing), the ratio cq/rg, peak RSS of cq's main process
and, apart, of its largest child (a pool worker, Pyrefly: ``cq_rss.py``), and the markdown
report's line count.

    python -m bench.latency                      # 'register' on the stdlib dir, 5 runs
    python -m bench.latency -q register -q __init__ --runs 5 --exclude 'site-packages/**'
    python -m bench.latency --cold               # every cq run with an empty cache dir
    python -m bench.latency --base /tmp/cq-base  # and another checkout's cq, same runs

``--base DIR`` runs the cq package of another checkout (``PYTHONPATH=DIR``, same interpreter)
interleaved with this one and rg, each with its own cache dir, and adds its columns.

``--exclude GLOB`` applies to both tools (cq ``--exclude``, rg ``-g '!GLOB'``); both run from the
root so globs mean the same. Extra cq-only arguments go after ``--``.
"""

from __future__ import annotations

import argparse

from bench._common import (
    cq_command,
    median,
    rg_binary,
    scratch_dir,
    stdlib_dir,
    time_command,
    time_cq,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-q", "--query", action="append", help="query (repeatable)")
    parser.add_argument("--root", default=stdlib_dir())
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cold", action="store_true", help="empty cq cache for every run")
    parser.add_argument("--exclude", action="append", default=[], help="glob, for both tools")
    parser.add_argument("--base", help="also run the cq of this checkout (same runs)")
    parser.add_argument("extra", nargs="*", help="extra cq arguments, after --")
    args = parser.parse_args()
    queries = args.query or ["register"]
    print(f"corpus: {args.root}  runs: {args.runs}  cache: {'cold' if args.cold else 'warm'}")
    print(f"excluded: {args.exclude}  cq extra args: {args.extra}")
    header = (
        f"{'query':<14}{'cq s':>8}{'rg s':>8}{'ratio':>8}{'cq cpu':>8}{'rg cpu':>8}"
        f"{'cq RSS MB':>11}{'child MB':>10}{'md lines':>10}"
    )
    if args.base:
        header += f"{'base s':>8}{'ratio':>8}{'base cpu':>9}{'cq/base cpu':>12}"
    print(header)
    for query in queries:
        row = measure(query, args.root, args.runs, args.cold, args.exclude, args.extra, args.base)
        line = (
            f"{query:<14}{row['cq']:>8.3f}{row['rg']:>8.3f}{row['cq'] / row['rg']:>8.1f}"
            f"{row['cq_cpu']:>8.3f}{row['rg_cpu']:>8.3f}{row['rss']:>11.0f}{row['child_rss']:>10.0f}"
            f"{row['lines']:>10d}"
        )
        if args.base:
            line += (
                f"{row['base']:>8.3f}{row['base'] / row['rg']:>8.1f}{row['base_cpu']:>9.3f}"
                f"{row['cq_cpu'] / row['base_cpu']:>12.3f}"
            )
        print(line)


def measure(
    query: str,
    root: str,
    runs: int,
    cold: bool,
    exclude: list[str],
    extra: list[str],
    base: str | None = None,
) -> dict:
    cq_excludes = [arg for glob in exclude for arg in ("--exclude", glob)]
    rg_excludes = [arg for glob in exclude for arg in ("-g", "!" + glob)]
    cq_argv = [*cq_command(), "search", query, "--root", root, *cq_excludes, *extra]
    rg_argv = [rg_binary(), "--json", "-w", *rg_excludes, "-e", query, "."]
    base_env = {"PYTHONPATH": base} if base else {}
    with scratch_dir() as warm_cache, scratch_dir() as base_warm:
        if not cold:
            time_command(cq_argv, env={"CQ_CACHE_DIR": warm_cache})  # fill the cache
            if base:
                time_command(cq_argv, env={"CQ_CACHE_DIR": base_warm, **base_env}, cwd=base)
        cq_times, rg_times, cq_cpu, rg_cpu, rss, child_rss = [], [], [], [], [], []
        base_times, base_cpu = [], []
        lines = 0
        for _ in range(runs):
            with scratch_dir() as cold_cache:
                env = {"CQ_CACHE_DIR": cold_cache if cold else warm_cache}
                cq = time_cq(cq_argv[len(cq_command()) :], env=env)
            if base:
                with scratch_dir() as cold_cache:
                    env = {"CQ_CACHE_DIR": cold_cache if cold else base_warm, **base_env}
                    other = time_command(cq_argv, env=env, cwd=base)
                base_times.append(other.seconds)
                base_cpu.append(other.cpu_seconds)
            rg = time_command(rg_argv, cwd=root)
            cq_times.append(cq.seconds)
            rg_times.append(rg.seconds)
            cq_cpu.append(cq.cpu_seconds)
            rg_cpu.append(rg.cpu_seconds)
            rss.append(cq.main_rss_mb)
            child_rss.append(cq.children_rss_mb)
            lines = cq.stdout.decode("utf-8", errors="replace").count("\n")
    return {
        "cq": median(cq_times),
        "rg": median(rg_times),
        "cq_cpu": median(cq_cpu),
        "rg_cpu": median(rg_cpu),
        "rss": max(rss),
        "child_rss": max(child_rss),
        "lines": lines,
        "base": median(base_times),
        "base_cpu": median(base_cpu),
    }


if __name__ == "__main__":
    main()
