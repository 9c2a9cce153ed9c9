"""Who takes the CPU while a busy server answers an identifier search (issue 43).

``bench/background.py`` times the busy identifier search; this says what ran beside it. In a
fresh server (its own runtime and cache dirs), an identifier search and a question on each
``--other`` root, then the question on ``--root``, then the measured identifier search on
``--root``: the CPU each thread of the server's processes (daemon, search processes, Pyrefly,
index builds) used while it ran, read from ``/proc`` before and after, summed by nice value.
The search process's own thread is the foreground; the niced ones are background work. CPU
seconds hold better than wall times on a loaded machine, but a busy machine stretches the
window, and with it what the background gets done: compare base and branch alternately.

    python -m bench.studies.busy_window --root /work/trees/head/moto \\
        --other /work/trees/head/allennlp \\
        --other /work/trees/head/sqlfluff --runs 2
    cd BASE && PYTHONPATH=BASE:$OLDPWD python -m bench.studies.busy_window ...   # a checkout

Linux only.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
from pathlib import Path

from bench._common import cq_command, scratch_dir, served_env
from bench.background import _family

_TICK = os.sysconf("SC_CLK_TCK")


def _threads(pids: set[int]) -> dict[tuple[int, int], tuple[float, int, str]]:
    """(pid, tid) -> CPU seconds so far, nice value, what runs (thread name, command line)."""
    found: dict[tuple[int, int], tuple[float, int, str]] = {}
    for pid in pids:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            for tid in os.listdir(f"/proc/{pid}/task"):
                head, tail = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)
                fields = tail.split()
                cpu = (int(fields[11]) + int(fields[12])) / _TICK
                name = head.split("(", 1)[1]
                found[(pid, int(tid))] = (cpu, int(fields[16]), f"{name}: {command[:60]}")
        except (OSError, ValueError, IndexError):
            continue
    return found


def _one(root: str, others: list[str], identifier: str, question: str) -> None:
    with scratch_dir(prefix="cqbw", ignore_cleanup_errors=True) as scratch:
        env = {**os.environ, **served_env(scratch)}
        cq = cq_command()
        started = subprocess.run([*cq, "server", "start"], env=env, capture_output=True, text=True)
        pid = int(started.stdout.split("pid ")[1].split()[0].rstrip(","))
        try:
            for other in others:
                for query in (identifier, question):
                    subprocess.run(
                        [*cq, "search", query, "--root", other], env=env, capture_output=True
                    )
            subprocess.run([*cq, "search", question, "--root", root], env=env, capture_output=True)
            before = _threads(_family(pid))
            began = time.perf_counter()
            subprocess.run(
                [*cq, "search", identifier, "--root", root], env=env, capture_output=True
            )
            wall = time.perf_counter() - began
            after = _threads(_family(pid))
        finally:
            family = _family(pid)
            subprocess.run([*cq, "server", "stop"], env=env, capture_output=True)
            deadline = time.monotonic() + 120
            while any(os.path.exists(f"/proc/{p}") for p in family) and time.monotonic() < deadline:
                time.sleep(0.2)
    used = [
        (cpu - before.get(key, (0.0, 0, ""))[0], nice, what)
        for key, (cpu, nice, what) in after.items()
        if cpu > before.get(key, (0.0, 0, ""))[0]
    ]
    by_nice = {
        n: round(sum(u[0] for u in used if u[1] == n), 2) for n in sorted({u[1] for u in used})
    }
    print(f"identifier {wall:.3f} s  load {os.getloadavg()[0]:.1f}  CPU s by nice {by_nice}")
    for cpu, nice, what in sorted(used, reverse=True)[:8]:
        print(f"  {cpu:5.2f}  nice {nice:3d}  {what}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--other", action="append", default=[], help="a root (repeatable)")
    parser.add_argument("-q", "--identifier", default="get_bucket")
    parser.add_argument("--question", default="how are log records formatted?")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    others = [os.path.abspath(o) for o in args.other]
    for _ in range(args.runs):
        _one(os.path.abspath(args.root), others, args.identifier, args.question)


if __name__ == "__main__":
    main()
