"""Searches while the server's background work runs, and how soon Pyrefly's answers come.

Issue 43 asks two things of a server that is busy with what earlier searches started
(Pyrefly indexing other roots, index builds):

1. **Foreground under background**: every search stays within 1.5x of its settled time.
   Each run takes a fresh cache dir and runtime dir, starts the server (``cq server start``)
   and measures on ``--root``, through the CLI and the server: a cold question (the first
   search of that root), a warm one (the same question again) and an identifier search.
   *Settled*: nothing else has run, and before the warm searches the server's processes have
   gone quiet (their CPU time still for a second: Pyrefly and the index are done). *Busy*:
   in another fresh server, one identifier search and one question on each ``--other`` root
   right before each measured search (the first half of the roots before the cold question,
   the second half before the warm ones), so their Pyrefly and index builds run beside it.
2. **Pyrefly's answers**: in a fresh server, the identifier searched once on ``--root``, then
   again ``--after`` seconds after the first one began (default 5; repeat the option for a
   search at each time), as JSON: of the shown callsites of the identifier, how many carry a
   resolved definition (target >= 90%), and of the shown code hits how many answers are
   complete (reference counts and errors in: ``summary.semantic.partial`` counts the others).

rg's time for the identifier (``rg --json -w``) is taken in the same runs. Wall seconds are
medians over ``--runs``; CPU seconds are the client's (the server's own are not a child of
it). Report the load: on a shared 2-core machine the other work moves every wall figure.

    python -m bench.background --root /work/trees/head/moto -q get_bucket \\
        --question 'how are log records formatted?' \\
        --other /work/trees/head/pyro --other /work/trees/head/gluonts \\
        --other /work/trees/head/allennlp --other /work/trees/head/sqlfluff --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._common import cq_command, median, rg_binary, served_env, settled, time_command

QUIET_CPU_S = 0.05  # the server's processes used less CPU than this over QUIET_WINDOW_S
QUIET_WINDOW_S = 1.0
QUIET_LIMIT_S = 180.0  # settling gives up after this (said in the output)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("-q", "--identifier", default="get_bucket")
    parser.add_argument("--question", default="how are log records formatted?")
    parser.add_argument("--other", action="append", default=[], help="a root (repeatable)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--after", type=float, action="append", help="seconds, Pyrefly's check (repeatable)"
    )
    parser.add_argument(
        "--skip", choices=("settled", "busy", "pyrefly"), action="append", default=[]
    )
    args = parser.parse_args()
    afters = sorted(args.after or [5.0])
    root = os.path.abspath(args.root)
    others = [os.path.abspath(o) for o in args.other]
    if "busy" not in args.skip and len(others) < 2:
        sys.exit("give at least two --other roots (or --skip busy)")
    print(f"root: {root}  others: {others}  runs: {args.runs}")
    print(f"load: {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} (1, 5 min)")
    walls: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    resolved: list[list[tuple[int, int, int, int]]] = []
    for _ in range(args.runs):
        if "settled" not in args.skip:
            for name, (wall, cpu) in _settled(root, args.identifier, args.question).items():
                walls.setdefault(f"settled {name}", []).append(wall)
                cpus.setdefault(f"settled {name}", []).append(cpu)
        if "busy" not in args.skip:
            for name, (wall, cpu) in _busy(root, args.identifier, args.question, others).items():
                walls.setdefault(f"busy {name}", []).append(wall)
                cpus.setdefault(f"busy {name}", []).append(cpu)
        if "pyrefly" not in args.skip:
            resolved.append(_pyrefly(root, args.identifier, afters))
        walls.setdefault("rg", []).append(_rg(root, args.identifier))
    print(f"{'search':<22}{'wall s':>8}{'cpu s':>7}{'x settled':>10}{'x rg':>7}  walls")
    rg = median(walls["rg"])
    for name, values in walls.items():
        if name == "rg":
            continue
        settled = median(walls.get(name.replace("busy", "settled"), values))
        print(
            f"{name:<22}{median(values):>8.3f}{median(cpus[name]):>7.2f}"
            f"{median(values) / settled:>10.2f}{median(values) / rg:>7.1f}  "
            + " ".join(f"{v:.2f}" for v in values)
        )
    print(f"{'rg -w ' + args.identifier:<22}{rg:>8.3f}")
    for run in resolved:
        for after, (got, shown, complete, code) in zip(afters, run, strict=True):
            rate = f"{100 * got / shown:.0f}%" if shown else "n/a"
            print(
                f"pyrefly {after:g} s after the first search: {got}/{shown} callsites "
                f"({rate}); {complete}/{code} answers complete"
            )
    print(f"load after: {os.getloadavg()[0]:.1f}")


class _Server:
    """A fresh cache dir and runtime dir with a server started in them, stopped on exit."""

    def __enter__(self) -> _Server:
        self.scratch = tempfile.TemporaryDirectory(
            prefix="cqbg", dir="/tmp", ignore_cleanup_errors=True
        )
        self.env = served_env(self.scratch.name)
        started = self.cq("server", "start")
        self.pid = int(started.stdout.split("pid ")[1].split()[0].rstrip(","))
        return self

    def __exit__(self, *_: object) -> None:
        """Stop the server and wait until its processes are gone: its search processes and
        Pyrefly finish after the server let go of its lock, and would run beside the next
        measurement (and write into the cache dir being removed)."""
        family = _family(self.pid)
        self.cq("server", "stop")
        deadline = time.monotonic() + QUIET_LIMIT_S
        while any(os.path.exists(f"/proc/{p}") for p in family) and time.monotonic() < deadline:
            time.sleep(0.1)
        settled(self.scratch.name)
        self.scratch.cleanup()

    def cq(self, *argv: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [*cq_command(), *argv],
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode not in (0, 1):
            sys.exit(f"cq {' '.join(argv)} failed: {done.stderr}")
        return done

    def timed(self, *argv: str) -> tuple[float, float]:
        timing = time_command([*cq_command(), *argv], env=self.env)
        if timing.returncode not in (0, 1):
            sys.exit(f"cq {' '.join(argv)} failed (exit {timing.returncode})")
        return timing.seconds, timing.cpu_seconds

    def settle(self) -> None:
        """Wait until the server's processes (daemon, search processes, Pyrefly) go quiet."""
        deadline = time.monotonic() + QUIET_LIMIT_S
        before = _tree_cpu(self.pid)
        while time.monotonic() < deadline:
            time.sleep(QUIET_WINDOW_S)
            now = _tree_cpu(self.pid)
            if now - before < QUIET_CPU_S:
                return
            before = now
        print(f"(the server did not settle within {QUIET_LIMIT_S:g} s)")


def _searches(root: str, identifier: str, question: str) -> dict[str, list[str]]:
    return {
        "question": ["search", question, "--root", root],
        "identifier": ["search", identifier, "--root", root],
    }


def _settled(root: str, identifier: str, question: str) -> dict[str, tuple[float, float]]:
    asked = _searches(root, identifier, question)
    with _Server() as server:
        got = {"cold question": server.timed(*asked["question"])}
        server.settle()
        got["warm question"] = server.timed(*asked["question"])
        got["identifier"] = server.timed(*asked["identifier"])
    return got


def _busy(
    root: str, identifier: str, question: str, others: list[str]
) -> dict[str, tuple[float, float]]:
    asked = _searches(root, identifier, question)
    half = len(others) // 2
    with _Server() as server:
        _kick(server, others[:half], identifier, question)
        got = {"cold question": server.timed(*asked["question"])}
        server.settle()
        _kick(server, others[half:], identifier, question)
        got["warm question"] = server.timed(*asked["question"])
        got["identifier"] = server.timed(*asked["identifier"])
    return got


def _kick(server: _Server, roots: list[str], identifier: str, question: str) -> None:
    """Searches on other roots: each starts its Pyrefly and its index build in the server."""
    for other in roots:
        for argv in _searches(other, identifier, question).values():
            server.cq(*argv)


def _pyrefly(root: str, identifier: str, afters: list[float]) -> list[tuple[int, int, int, int]]:
    """At each of ``afters`` s after the first search of ``identifier``: its shown callsites
    resolved, of how many; its shown code hits' answers complete, of how many."""
    out = []
    with _Server() as server:
        started = time.monotonic()
        server.cq("search", identifier, "--root", root)
        for after in afters:
            time.sleep(max(0.0, started + after - time.monotonic()))
            out.append(
                _resolved(
                    server.cq("search", identifier, "--root", root, "--format", "json").stdout
                )
            )
    return out


def _resolved(report: str) -> tuple[int, int, int, int]:
    result = json.loads(report)
    findings = result["findings"]
    facts = [((f.get("enrichment") or {}).get("semantic") or {}) for f in findings]
    calls = [s for f, s in zip(findings, facts, strict=True) if f["category"] == "callsite"]
    code = sum(1 for s in facts if s.get("status") not in (None, "skipped"))
    got = sum(1 for s in calls if s.get("definition") is not None)
    told = result["summary"].get("semantic") or {}
    complete = code - told.get("pending", 0) - told.get("partial", 0)
    return got, len(calls), complete, code


def _family(pid: int) -> set[int]:
    """``pid`` and its live descendants."""
    found: set[int] = set()
    stack = [pid]
    while stack:
        current = stack.pop()
        found.add(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                children = Path(f"/proc/{current}/task/{task}/children").read_text().split()
                stack += [int(c) for c in children]
        except (OSError, ValueError):
            continue
    return found


def _tree_cpu(pid: int) -> float:
    """CPU seconds (user + system, with reaped children's) of ``pid`` and its descendants."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for member in _family(pid):
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(fields[i]) for i in (11, 12, 13, 14)) / tick
        except (OSError, IndexError, ValueError):
            continue
    return total


def _rg(root: str, identifier: str) -> float:
    started = time.perf_counter()
    argv = [rg_binary(), "--json", "-w", "-e", identifier, "."]
    subprocess.run(argv, cwd=root, capture_output=True)
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
