"""Localization benchmark: does one ``cq search -`` on an issue text rank the fixed files first?

For every row of a SWE-bench-style JSONL file (problem_statement, gold_code_files,
gold_functions), run ONE ``cq search - --format json`` over the tree at the issue's base commit
(``TREES/<instance_id>``, made by ``prepare_eval_trees.py``) with the issue text on stdin, once
with rewriting (default) and once with ``--no-rewrite``. The findings, in rank order, collapse
to distinct files and distinct containing scopes. Reported: file Acc@k (every gold code file
within the top k files) and Hit@k (any of them), k = 1, 3, 5, 10; function Hit@5 (any gold
function among the top 5 distinct ``path::Scope``); per-query wall time. ``--no-cache`` is not
passed: run once to warm the caches and read the second run's latency, or pass ``--cold``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KS = (1, 3, 5, 10)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="../shared/eval/swebench_lite_dev_tuning.jsonl")
    ap.add_argument("--trees", default="/work/eval-trees")
    ap.add_argument("--limit", type=int, default=500, help="findings asked of cq per query")
    ap.add_argument("--only", action="append", default=[], help="instance ids to run")
    ap.add_argument("--modes", default="rewrite,no-rewrite", help="comma list")
    ap.add_argument("--cold", action="store_true", help="a fresh CQ_CACHE_DIR for every query")
    ap.add_argument("--verbose", "-v", action="store_true", help="per-instance ranks")
    args = ap.parse_args()
    rows = [json.loads(line) for line in Path(args.data).read_text().splitlines() if line]
    if args.only:
        rows = [r for r in rows if r["instance_id"] in args.only]
    for mode in args.modes.split(","):
        results = [run_one(row, Path(args.trees), mode, args) for row in rows]
        report(mode, results, args.verbose)
    return 0


def run_one(row: dict, trees: Path, mode: str, args: argparse.Namespace) -> dict:
    tree = trees / row["instance_id"]
    argv = [sys.executable, "-m", "cq", "search", "-", "--format", "json"]
    argv += ["--limit", str(args.limit), "--root", str(tree)]
    if mode == "no-rewrite":
        argv.append("--no-rewrite")
    env = dict(os.environ)
    if args.cold:
        env["CQ_CACHE_DIR"] = tempfile.mkdtemp(prefix="cq-bench-")
    start = time.perf_counter()
    proc = subprocess.run(
        argv, input=row["problem_statement"].encode(), capture_output=True, env=env
    )
    seconds = time.perf_counter() - start
    files: list[str] = []
    scopes: list[str] = []
    rewriter = "-"
    if proc.stdout:
        data = json.loads(proc.stdout)
        rw = data["summary"].get("rewrite") or {}
        rewriter = rw.get("rewriter", "-") if rw.get("applied") else "-"
        for f in data["findings"]:
            if f["file"] not in files:
                files.append(f["file"])
            if f.get("containing_scope"):
                scope = f"{f['file']}::{f['containing_scope']}"
                if scope not in scopes:
                    scopes.append(scope)
    elif proc.returncode == 2:
        print(f"{row['instance_id']}: {proc.stderr.decode().strip()}", file=sys.stderr)
    gold = set(row["gold_code_files"])
    ranks = [files.index(g) + 1 if g in files else None for g in gold]
    return {
        "id": row["instance_id"],
        "seconds": seconds,
        "files": files,
        "ranks": ranks,
        "acc": {k: bool(gold) and all(r is not None and r <= k for r in ranks) for k in KS},
        "hit": {k: any(r is not None and r <= k for r in ranks) for k in KS},
        "fn": _function_hit(scopes[:5], row.get("gold_functions") or []),
        "rewriter": rewriter,
    }


def _function_hit(top: list[str], gold: list[str]) -> bool | None:
    """Any gold ``path::Class.method`` among the top scopes (a nested scope counts too)."""
    if not gold:
        return None
    return any(s == g or s.startswith(g + ".") for s in top for g in gold)


def report(mode: str, results: list[dict], verbose: bool) -> None:
    n = len(results)
    print(f"\n## {mode} ({n} issues)")
    if verbose:
        for r in results:
            fn = {True: "fn-hit", False: "fn-miss", None: "fn-n/a"}[r["fn"]]
            print(f"  {r['id']:40} ranks {r['ranks']} {fn} {r['seconds']:.2f}s {r['rewriter']}")
    print("| k | file Acc@k | file Hit@k |")
    print("|---|---|---|")
    for k in KS:
        acc = sum(r["acc"][k] for r in results)
        hit = sum(r["hit"][k] for r in results)
        print(f"| {k} | {acc}/{n} = {100 * acc / n:.1f}% | {hit}/{n} = {100 * hit / n:.1f}% |")
    with_fn = [r for r in results if r["fn"] is not None]
    fn_hits = sum(bool(r["fn"]) for r in with_fn)
    if with_fn:
        print(f"function Hit@5: {fn_hits}/{len(with_fn)} = {100 * fn_hits / len(with_fn):.1f}%")
    times = sorted(r["seconds"] for r in results)
    print(
        f"latency per query: median {statistics.median(times):.2f} s, "
        f"max {times[-1]:.2f} s, total {sum(times):.1f} s"
    )


if __name__ == "__main__":
    raise SystemExit(main())
