"""Two cq installs of one user alternating searches: each through its own warm server.

Target (issue 41): each install's warm identifier search <= 2x rg + 0.1 s (median), and
neither server replaced by the other's searches (the same two server pids from the first
search to the last). The second install is a copy of this checkout's package and profiles
(another path: another install, as a second venv is); a private runtime dir and cache dir;
the servers are stopped at the end. Runs are interleaved (install A, install B, rg, ...).

    python -m bench.server_installs --runs 7 [--setting CQ_CACHE_MAX_MB=600]
    python -m bench.server_installs --cq-checkout /tmp/cq-base --setting CQ_CACHE_MAX_MB=600
    python -m bench.server_installs --root $CQ_BENCH_TREES/ignite -q Engine
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench._common import cq_command, rg_binary, stdlib_dir, time_command


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-q", "--query", default="register")
    parser.add_argument("--root", default=stdlib_dir())
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--cq-checkout", help="another checkout's cq for both (before/after)")
    parser.add_argument("--setting", help="NAME=VALUE for install B too (two settings)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="cqb", dir="/tmp"))
    copy = _copy_of_cq(Path(args.cq_checkout) if args.cq_checkout else None, work / "copy")
    base = {**os.environ, "XDG_RUNTIME_DIR": str(work), "CQ_SERVER": "1"}
    base["CQ_CACHE_DIR"] = str(work / "cache")
    first = {**base, "PYTHONPATH": args.cq_checkout} if args.cq_checkout else dict(base)
    second = {**base, "PYTHONPATH": str(copy)}
    if args.setting:
        name, _, value = args.setting.partition("=")
        second[name] = value
    installs = {"install A": first, "install B": second}
    search = [*cq_command(), "search", args.query, "--exclude=site-packages/**"]
    rg = [rg_binary(), "--json", "-w", args.query, "--glob=!site-packages/**"]
    print(f"corpus: {args.root}  query: {args.query}  runs: {args.runs}")
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    try:
        pids = {name: _start(env) for name, env in installs.items()}
        for env in installs.values():  # warm: caches, each server's search process
            for _ in range(2):
                time_command(search, env, cwd=args.root)
        seconds: dict[str, list[float]] = {name: [] for name in (*installs, "rg")}
        for _ in range(args.runs):
            for name, env in installs.items():
                seconds[name].append(time_command(search, env, cwd=args.root).seconds)
            seconds["rg"].append(time_command(rg, base, cwd=args.root).seconds)
        after = {name: _server_pid(env) for name, env in installs.items()}
    finally:
        for env in installs.values():
            subprocess.run([*cq_command(), "server", "stop"], env=env, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    median_rg = statistics.median(seconds["rg"])
    limit = 2 * median_rg + 0.1
    for name, values in seconds.items():
        median = statistics.median(values)
        verdict = f"{'met' if median <= limit else 'missed'} (<= {limit:.3f} s)"
        print(f"{name:<10} median {median:.3f} s  min {min(values):.3f} s  {verdict}")
    kept = all(pids[name] == after[name] for name in installs) and len(set(pids.values())) == 2
    print(f"servers: {pids} before, {after} after: {'neither replaced' if kept else 'REPLACED'}")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


def _copy_of_cq(checkout: Path | None, copy: Path) -> Path:
    """A copy of ``checkout``'s cq (else this one's) and its profiles: another install."""
    import cq

    package = checkout / "cq" if checkout else Path(cq.__file__).parent
    shutil.copytree(package, copy / "cq", ignore=shutil.ignore_patterns("__pycache__"))
    if (package.parent / "profiles").is_dir():
        shutil.copytree(package.parent / "profiles", copy / "profiles")
    return copy


def _start(env: dict[str, str]) -> int:
    started = subprocess.run(
        [*cq_command(), "server", "start"], env=env, capture_output=True, cwd="/"
    )
    if started.returncode:
        sys.exit(f"a server did not start: {started.stderr.decode()}")
    return int(started.stdout.split()[-1])


def _server_pid(env: dict[str, str]) -> int | None:
    status = subprocess.run(
        [*cq_command(), "server", "status"], env=env, capture_output=True, cwd="/"
    )
    words = status.stdout.split()
    return int(words[words.index(b"pid") + 1].rstrip(b",")) if b"pid" in words else None


if __name__ == "__main__":
    main()
