"""What the Pyrefly semantic stage costs and how often it resolves, next to rg in the same run.

Per tree (the stdlib without site-packages, plus any ``--tree NAME=DIR``), per query:

1. warm, as in ``cq mcp``: one process, the server already running (indexed, the query
   asked once before) and cq's cache filled;
   median wall time of ``run_search`` with the stage on and off (interleaved), the stage's
   own ``run.timings_ms.semantic``, and ``rg --json -w`` on the same name;
2. one-shot CLI: ``cq search`` with and without ``--no-semantic`` (cq cache warm, a new
   Pyrefly every run, server start and stop included);
3. resolution: of the shown callsites of the queried name, when the root defines it, how
   many got a resolved definition; and whether every resolved definition in the root is a
   line cq itself classifies as ``definition`` (all findings of the name, ``--limit 0``);
4. identical warm runs give identical JSON (run facts aside);
5. a killed and a SIGSTOPped server: the search's stage time against budget + 0.5 s;
6. Pyrefly's peak RSS (``VmHWM``) on the tree after the queries.

    python bench/semantic_cost.py --runs 5
    python bench/semantic_cost.py --tree monai=/work/trees/sem-monai -q monai:LoadImage
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).parent.parent))
sys.path.insert(0, str(Path(__file__).parent))
from _common import cq_command, median, rg_binary, stdlib_dir, time_command

from cq.model import SearchRequest
from cq.pipeline import run_search
from cq.semantic.answers import identifier_at
from cq.semantic.pool import pool

STDLIB_QUERIES = ("register", "urlopen", "getLogger", "deepcopy", "literal_eval", "namedtuple")
TREE_QUERIES = {
    "monai": ("LoadImage", "ensure_tuple", "convert_to_tensor", "look_up_option", "Compose"),
}
STDLIB_EXCLUDE = ("site-packages/**",)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("-q", "--query", action="append", help="TREE:QUERY (repeatable)")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    trees = [("stdlib", stdlib_dir(), STDLIB_EXCLUDE)]
    trees += [(n, d, ()) for n, d in (t.split("=", 1) for t in args.tree)]
    chosen: dict[str, list[str]] = {}
    for item in args.query or []:
        name, _, query = item.partition(":")
        chosen.setdefault(name, []).append(query)
    for name, root, exclude in trees:
        queries = chosen.get(name) or list(TREE_QUERIES.get(name, STDLIB_QUERIES))
        print(f"\n# {name}: {root} ({count_py(root, exclude)} .py files)")
        bench_tree(root, exclude, queries, args.runs)


def bench_tree(root: str, exclude: tuple[str, ...], queries: list[str], runs: int) -> None:
    budget = os.environ.get("CQ_SEMANTIC_BUDGET_MS", "1000")
    resolved = total = bad_targets = targets = 0
    print(f"budget {budget} ms; warm = one process, server running, cq cache filled")
    print("query | hits | warm on/off ms | stage ms | rg ms | one-shot on/off ms | resolved")
    for query in queries:
        request = SearchRequest(query=query, root=root, exclude=exclude)
        off_request = msgspec.structs.replace(request, semantic=False)
        run_search(off_request)
        first = run_search(request)  # starts the server, fills the cache
        pool().running(root).wait_indexed(time.monotonic() + 120)  # type: ignore[union-attr]
        run_search(request)  # Pyrefly checks the files again after indexing: not yet warm
        warm_on, warm_off, stage = [], [], []
        outputs = set()
        for _ in range(runs):
            t = time.perf_counter()
            on = run_search(request)
            warm_on.append((time.perf_counter() - t) * 1000)
            stage.append(on.run.timings_ms.get("semantic", 0.0))
            outputs.add(msgspec.json.encode(msgspec.structs.replace(on, run=first.run)))
            t = time.perf_counter()
            run_search(off_request)
            warm_off.append((time.perf_counter() - t) * 1000)
        rg = [rg_ms(query, root, exclude) for _ in range(runs)]
        shot_on, shot_off = one_shot(query, root, exclude, max(2, runs // 2))
        r, n, bad, checked = resolution(on, query, root, exclude)
        resolved, total, bad_targets, targets = (
            resolved + r,
            total + n,
            bad_targets + bad,
            targets + checked,
        )
        statuses = on.summary.telemetry.get("semantic", {})
        print(
            f"{query} | {len(on.findings)} {dict(statuses)}"
            f" | {median(warm_on):.0f}/{median(warm_off):.0f}"
            f" (+{median(warm_on) - median(warm_off):.0f}) | {median(stage):.0f} | {median(rg):.0f}"
            f" | {shot_on:.0f}/{shot_off:.0f} (+{shot_on - shot_off:.0f}) | {r}/{n}"
            f" | identical warm runs: {len(outputs) == 1}"
        )
    rate = f"{100 * resolved / total:.1f}%" if total else "n/a"
    print(f"callsites of root-defined names resolved: {resolved}/{total} = {rate}")
    print(f"resolved definitions not on a `definition` line: {bad_targets}/{targets}")
    server = pool().running(root)
    if server is not None and server.process is not None:
        print(f"pyrefly peak RSS: {peak_rss_mb(server.process.pid):.0f} MB")
    for how in ("killed", "stopped"):
        print(f"{how} server: {failure(queries[0], root, exclude, how)}")
    pool().stop_all()


def rg_ms(query: str, root: str, exclude: tuple[str, ...]) -> float:
    argv = [rg_binary(), "--json", "-w", query, "."]
    for glob in exclude:
        argv += ["--glob", f"!{glob}"]
    return time_command(argv, cwd=root).seconds * 1000


def one_shot(query: str, root: str, exclude: tuple[str, ...], runs: int) -> tuple[float, float]:
    argv = [*cq_command(), "search", query, "--root", root, "--format", "json"]
    for glob in exclude:
        argv += ["--exclude", glob]
    on, off = [], []
    for _ in range(runs):
        on.append(time_command(argv).seconds * 1000)
        off.append(time_command([*argv, "--no-semantic"]).seconds * 1000)
    return median(on), median(off)


def resolution(result, query: str, root: str, exclude: tuple[str, ...]):  # type: ignore[no-untyped-def]
    """(resolved, callsites): shown callsites of a name the root defines that got a resolved
    definition (in the root, or a module name outside it); (bad, checked): resolved definitions
    in the root on a line cq does not classify as ``definition`` (checked with a search for
    the identifier at that place)."""
    every = _all_findings(query, root, exclude)
    defined = any(f.category == "definition" and f.text == query for f in every.values())
    resolved = total = bad = checked = 0
    for f in result.findings:
        semantic = f.enrichment.semantic if f.enrichment else None
        target = semantic.definition if semantic else None
        if f.category == "callsite" and f.text.split(".")[-1] == query and defined:
            total += 1
            resolved += target is not None
        if target is not None and target.file is not None and f.category != "definition":
            line = (Path(root) / target.file).read_text(errors="replace").split("\n")
            name = identifier_at(line[target.line - 1], target.col) or query
            here = _all_findings(name, root, exclude).get((target.file, target.line))
            checked += 1
            bad += here is None or here.category != "definition"
    return resolved, total, bad, checked


_FINDINGS: dict[tuple[str, str], dict] = {}


def _all_findings(name: str, root: str, exclude: tuple[str, ...]) -> dict:
    if (name, root) not in _FINDINGS:
        request = SearchRequest(query=name, root=root, exclude=exclude, limit=0, semantic=False)
        found = run_search(msgspec.structs.replace(request, mode="identifier"))
        _FINDINGS[(name, root)] = {(f.file, f.line): f for f in found.findings}
    return _FINDINGS[(name, root)]


def failure(query: str, root: str, exclude: tuple[str, ...], how: str) -> str:
    """Start a fresh server, kill or stop it once it is up, and time the search."""
    pool().stop_all()
    request = SearchRequest(query=query, root=root, exclude=exclude)
    server = pool().get(root)
    assert server is not None
    server.initialized.wait(30)
    pid = server.process.pid  # type: ignore[union-attr]
    os.kill(pid, signal.SIGKILL if how == "killed" else signal.SIGSTOP)
    t = time.perf_counter()
    result = run_search(request)
    wall = (time.perf_counter() - t) * 1000
    if how == "stopped":
        os.kill(pid, signal.SIGCONT)
    pool().stop_all()
    budget = float(os.environ.get("CQ_SEMANTIC_BUDGET_MS", "1000"))
    stage = result.run.timings_ms.get("semantic", 0.0)
    statuses = result.summary.telemetry.get("semantic", {})
    return (
        f"statuses {dict(statuses)}, stage {stage:.0f} ms (budget + 500 = {budget + 500:.0f}),"
        f" search {wall:.0f} ms"
    )


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def count_py(root: str, exclude: tuple[str, ...]) -> int:
    argv = [rg_binary(), "--files", "-t", "py", "."]
    for glob in exclude:
        argv += ["--glob", f"!{glob}"]
    done = subprocess.run(argv, capture_output=True, check=False, cwd=root)
    return len(done.stdout.splitlines())


if __name__ == "__main__":
    main()
