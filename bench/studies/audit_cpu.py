"""Where a cold audit search's CPU goes: this checkout against another, interleaved, beside rg.

``bench/audit_scale.py`` reads CPU from ``wait4``, which counts only the children cq reaped: a
spawned pool is shut down without waiting at exit, so its workers' CPU may be missing there.
This runs the CLI in a wrapper that waits for the pool at exit, so the children's CPU holds
rg and every worker; it prints per run the wall time, cq's own CPU (the main process), its
children's, the CPU of the search's stages in the main process (rg's events turned into
matches, classification, ranking, enrichment) and, in the same round, rg's own run
(``rg --json -w``) with its CPU. A fresh cache dir each run; report the load (printed).

    python -m bench.studies.audit_cpu --root /tmp/audit-tree --base /tmp/cq-base --runs 3

``--base DIR``: a checkout (``git archive REV cq profiles | tar -x -C DIR``) run the same way.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from bench._common import median, rg_binary, scratch_dir

_WRAPPER = """
import atexit, functools, resource, runpy, sys, time
started = time.perf_counter()
spent = {}
def timed(module, name, label):
    function = getattr(module, name)
    @functools.wraps(function)
    def run(*args, **kwargs):
        begun = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + time.process_time() - begun
    setattr(module, name, run)
def report():
    import cq.classify.pool as pool
    if pool._pool is not None:
        pool._pool.shutdown(wait=True)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    stages = " ".join(f"{k}={v:.3f}" for k, v in spent.items())
    print("AUDIT", time.perf_counter() - started, time.process_time(),
          children.ru_utime + children.ru_stime, stages, file=sys.stderr)
if __name__ == "__main__":
    import cq.ladder, cq.pipeline
    timed(cq.ladder, "collect_candidates", "rg_events")
    for name, label in (("classify_all", "classify"), ("score_findings", "rank"),
                        ("enrich_shown", "enrich")):
        timed(cq.pipeline, name, label)
    atexit.register(report)
    sys.argv = ["cq", *sys.argv[1:]]
    runpy.run_module("cq", run_name="__main__")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, help="the tree to search")
    parser.add_argument("-q", "--query", default="get")
    parser.add_argument("--profile", default="audit")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--base", help="another checkout, run interleaved with this one")
    args = parser.parse_args()
    argv = ["search", args.query, "--root", os.path.abspath(args.root)]
    argv += ["--profile", args.profile, "--format", "json"]
    sides = {"this": os.getcwd(), **({"base": os.path.abspath(args.base)} if args.base else {})}
    rows: dict[str, list[tuple[float, float, float]]] = {name: [] for name in sides}
    rg_rows: list[tuple[float, float]] = []
    print(f"load {os.getloadavg()[0]:.1f}")
    for _ in range(args.runs):
        for name, checkout in sides.items():
            wall, own, children, stages = _run_cq(argv, checkout)
            rows[name].append((wall, own, children))
            print(f"{name:5} wall {wall:6.2f}  own {own:5.2f}  children {children:5.2f}  {stages}")
        rg_rows.append(_run_rg(args.query, args.root))
        print(f"rg    wall {rg_rows[-1][0]:6.2f}  cpu {rg_rows[-1][1]:5.2f}")
    print(f"load after {os.getloadavg()[0]:.1f}")
    print("medians: wall s, own CPU s, children CPU s, total CPU s")
    for name, runs in rows.items():
        wall, own, children = (median([r[i] for r in runs]) for i in range(3))
        print(f"{name:5} {wall:7.2f} {own:6.2f} {children:6.2f} {own + children:6.2f}")
    rg_wall, rg_cpu = (median([r[i] for r in rg_rows]) for i in range(2))
    print(f"rg    {rg_wall:7.2f} {'':6} {'':6} {rg_cpu:6.2f}")


def _run_cq(argv: list[str], checkout: str) -> tuple[float, float, float, str]:
    with scratch_dir() as cache:
        env = {**os.environ, "CQ_SERVER": "0", "CQ_CACHE_DIR": cache, "PYTHONPATH": checkout}
        proc = subprocess.run(
            [sys.executable, "-c", _WRAPPER, *argv],
            env=env,
            cwd=checkout,
            capture_output=True,
            check=False,
        )
    line = next((x for x in proc.stderr.decode().splitlines() if x.startswith("AUDIT ")), None)
    if proc.returncode != 0 or line is None:
        sys.exit(f"cq failed: {proc.stderr.decode(errors='replace')[-2000:]}")
    _, wall, own, children, *stages = line.split()
    return float(wall), float(own), float(children), " ".join(stages)


def _run_rg(query: str, root: str) -> tuple[float, float]:
    started = time.perf_counter()
    proc = subprocess.Popen(
        [rg_binary(), "--json", "-w", "-e", query, "."],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    main()
