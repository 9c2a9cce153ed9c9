"""Does a question's Answer name the code the fix touched? One ``cq search -`` per issue.

For each issue of a tuning set (``--sample N``: ``_loc.sample``) with gold functions, the
report's Answer (``summary.primary``'s definition, as ``path::Scope.name``) and its first
Relevant Function are checked against the gold functions (``_loc.function_hit``). Prints the
share of issues each names, for the issue text (``--text full``) or its title alone.

    CQ_LLM=off python -m bench.studies.answer_hits --data ../shared/eval/rust_tuning.jsonl \
        --sample 60 --text full --jobs 2
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench import _common, _loc


def check(row: dict, trees: Path, text: str) -> tuple[bool, bool] | None:
    """(the Answer names a gold function, the first Relevant Function does)."""
    tree = trees / row["instance_id"]
    if not tree.is_dir():
        return None
    argv = [sys.executable, "-m", "cq", "search", "-", "--format", "json", "--root", str(tree)]
    query = _loc.query_text(row, text)
    proc = subprocess.run(argv, input=query.encode(), capture_output=True, check=False)
    if not proc.stdout:
        return None
    data = json.loads(proc.stdout)
    primary = data["summary"].get("primary")
    answer = _loc.answer_key(data["findings"][primary]) if primary is not None else None
    section = next((s for s in data["sections"] if s["type"] == "functions"), None)
    first = section["functions"][0]["name"] if section and section["functions"] else None
    gold = row["gold_functions"]
    return (
        bool(answer and _loc.function_hit([answer], gold)),
        bool(first and _loc.function_hit([first], gold)),
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    _common.dir_argument(
        ap,
        "--trees",
        _common.EVAL_TREES,
        "the trees at the issues' base commits, DIR/<instance_id> (bench/prepare_eval_trees.py)",
    )
    ap.add_argument("--sample", type=int)
    ap.add_argument("--text", choices=("full", "title"), default="full")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    rows = [json.loads(line) for line in Path(args.data).read_text().splitlines() if line]
    rows = [r for r in _loc.sample(rows, args.sample) if r.get("gold_functions")]
    trees = Path(args.trees)
    with ThreadPoolExecutor(args.jobs) as pool:
        results = [r for r in pool.map(lambda r: check(r, trees, args.text), rows) if r]
    n = max(1, len(results))
    answer = 100 * sum(a for a, _ in results) / n
    first = 100 * sum(f for _, f in results) / n
    name = f"{Path(args.data).name}/{args.text}"
    print(f"{name}: {len(results)} issues; Answer {answer:.1f}%, first function {first:.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
