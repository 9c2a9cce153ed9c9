"""A cold one-shot search with its forked helpers (``cq/forked.py``) and without: its own CPU.

A search that stays in-process hands part of its analyses (``cq/classify/pool.py``) and of its
shown files' enrichment (``cq/enrich/shown.py``) to a forked helper. On a machine with a free
second core the search's own CPU is its critical path; this prints its medians, with the
helpers (the defaults) and without (a user profile ``nohelp``: the shipped ``interactive`` with
both ``helper_min_bytes`` out of reach), interleaved, a fresh cache dir each run, next to the
CPU of its children (rg and the helpers) and the wall time. Report the load (``uptime``).

    python -m bench.studies.fork_helpers --exclude 'site-packages/**'          # 'register'
    python -m bench.studies.fork_helpers --root /work/trees/head/moto -q get_bucket
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from bench._common import median, scratch_dir, stdlib_dir

# Runs the CLI in this interpreter and prints, at exit, wall s, own CPU s, children's CPU s.
_WRAPPER = """
import atexit, resource, runpy, sys, time
started = time.perf_counter()
def report():
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(time.perf_counter() - started, time.process_time(),
          children.ru_utime + children.ru_stime, file=sys.stderr)
atexit.register(report)
sys.argv = ["cq", *sys.argv[1:]]
runpy.run_module("cq", run_name="__main__")
"""
_OFF = "\n[scale]\nhelper_min_bytes = 1000000000\n\n[enrich]\nhelper_min_bytes = 1000000000\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-q", "--query", action="append", help="query (repeatable)")
    parser.add_argument("--root", default=stdlib_dir())
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--exclude", action="append", default=[], help="glob")
    args = parser.parse_args()
    from cq.profiles import profiles_dir

    print(f"load: {os.getloadavg()[0]:.1f}")
    print(f"{'query':<14}{'helpers':>8}{'wall s':>8}{'own cpu':>9}{'children cpu':>14}")
    with scratch_dir() as config:
        profiles = Path(config) / "cq" / "profiles"
        profiles.mkdir(parents=True)
        shipped = (profiles_dir() / "interactive.toml").read_text()
        (profiles / "nohelp.toml").write_text(shipped + _OFF)
        for query in args.query or ["register"]:
            argv = ["search", query, "--root", os.path.abspath(args.root)]
            for glob in args.exclude:
                argv += ["--exclude", glob]
            rows: dict[str, list[tuple[float, ...]]] = {"on": [], "off": []}
            for _ in range(args.runs):
                for label, extra in (("on", []), ("off", ["--profile", "nohelp"])):
                    rows[label].append(_run([*argv, *extra], config))
            for label, runs in rows.items():
                print(
                    f"{query:<14}{label:>8}{median([r[0] for r in runs]):>8.2f}"
                    f"{median([r[1] for r in runs]):>9.3f}{median([r[2] for r in runs]):>14.3f}"
                )
    print(f"load after: {os.getloadavg()[0]:.1f}")


def _run(argv: list[str], config: str) -> tuple[float, ...]:
    with scratch_dir() as cache:
        env = {**os.environ, "CQ_SERVER": "0", "CQ_CACHE_DIR": cache, "XDG_CONFIG_HOME": config}
        proc = subprocess.run(
            [sys.executable, "-c", _WRAPPER, *argv], env=env, capture_output=True, check=False
        )
    if proc.returncode != 0:
        sys.exit(f"cq failed: {proc.stderr.decode(errors='replace')}")
    return tuple(float(x) for x in proc.stderr.decode().split()[-3:])


if __name__ == "__main__":
    main()
