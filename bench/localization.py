"""Localization benchmark: does one ``cq search -`` on an issue text rank the fixed files first?

For every row of a SWE-bench-style JSONL file (problem_statement, gold_code_files,
gold_functions), run ONE ``cq search - --format json`` over the tree at the issue's base commit
(``TREES/<instance_id>``, made by ``prepare_eval_trees.py``) with the issue text on stdin, once
with rewriting (default) and once with ``--no-rewrite`` (``--modes``), with the full text
and/or the title only (``--text full,title``; the title is the first non-blank line, see
``_loc.title``). The findings, in rank order, collapse to distinct files and distinct
containing scopes. Reported per repository and pooled (and pooled without the rows flagged
``inline_code_maybe_dropped``, when a set has them): file Acc@k (every gold code file within
the top k files) and Hit@k (any of them), k = 1, 3, 5, 10; function Hit@5 (any gold function
among the first 5 Relevant Functions when the report has them, else among the top 5 distinct
``path::Scope`` of the findings); "Answer edited": the report's Answer (``summary.primary``'s
definition) is a gold function, of the issues that have one (no Answer counts as a miss);
median wall time per query.

``--raw-dir DIR`` keeps every report (for ``bench/studies/function_answer.py``'s replays).
``--json-out`` keeps every issue's gold ranks and top files, for ``loc_compare.py`` (diff two
runs, fuse with BM25). ``--sample N`` runs a fixed subsample (``_loc.sample``).
The offline rewriter is measured (``CQ_LLM=off``) unless ``--llm``.
``--cq-checkout DIR`` measures the cq package of another source tree (``python -m cq`` runs in
DIR), so a before/after pair needs no branch switch. ``--no-cache``
is not passed: run once to warm the caches and read the second run's latency, or ``--cold``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import _common, _loc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="../shared/eval/swebench_lite_dev_tuning.jsonl")
    _common.dir_argument(
        ap,
        "--trees",
        _common.EVAL_TREES,
        "the trees at the issues' base commits, DIR/<instance_id> (bench/prepare_eval_trees.py)",
    )
    ap.add_argument("--limit", type=int, default=500, help="findings asked of cq per query")
    ap.add_argument("--only", action="append", default=[], help="instance ids to run")
    ap.add_argument("--modes", default="rewrite,no-rewrite", help="comma list")
    ap.add_argument("--text", default="full", help="comma list of full, title")
    ap.add_argument("--sample", type=int, help="a fixed subsample of N issues (per-repo share)")
    ap.add_argument("--jobs", type=int, default=1, help="queries run at once")
    ap.add_argument(
        "--extra-args",
        default="",
        help="more cq search arguments, one string: --extra-args='--no-index'",
    )
    ap.add_argument("--json-out", help="write per-issue ranks and top files here")
    ap.add_argument(
        "--raw-dir", help="also keep each report here (ID.TEXT.json.gz), for offline replays"
    )
    ap.add_argument("--keep-files", type=int, default=20, help="top files kept in --json-out")
    ap.add_argument("--cold", action="store_true", help="a fresh CQ_CACHE_DIR for every query")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per query (then: none)")
    ap.add_argument("--llm", action="store_true", help="let cq ask an LLM (default CQ_LLM=off)")
    ap.add_argument(
        "--cq-checkout",
        default=str(Path(__file__).resolve().parent.parent),
        help="run the cq package of this source tree (e.g. a `git archive` of the base commit)",
    )
    ap.add_argument("--verbose", "-v", action="store_true", help="per-instance ranks")
    args = ap.parse_args()
    rows = _loc.load_rows(args.data)
    if args.only:
        rows = [r for r in rows if r["instance_id"] in args.only]
    rows = _loc.sample(rows, args.sample)
    runs = []
    for mode in args.modes.split(","):
        for text in args.text.split(","):
            instances = _loc.run_all(
                rows, lambda row, m=mode, t=text: run_one(row, m, t, args), args.jobs
            )
            options = [f"--limit={args.limit}", f"--cq-checkout={args.cq_checkout}"]
            options += shlex.split(args.extra_args)
            options += [f"--sample={args.sample}"] if args.sample else []
            options += ["--llm"] if args.llm else []
            run = _loc.Run("cq", mode, text, args.data, options, instances)
            runs.append(run)
            print(_loc.table(run) + "\n")
            if args.verbose:
                print("\n".join(_loc.verbose_lines(run)) + "\n")
            sys.stdout.flush()
    if args.json_out:
        _loc.write(args.json_out, runs)
    return 0


def run_one(row: dict, mode: str, text: str, args: argparse.Namespace) -> _loc.Instance:
    tree = Path(args.trees).resolve() / row["instance_id"]
    argv = [sys.executable, "-m", "cq", "search", "-", "--format", "json"]
    argv += ["--limit", str(args.limit), "--root", str(tree)]
    if mode == "no-rewrite":
        argv.append("--no-rewrite")
    argv += shlex.split(args.extra_args)
    env = dict(os.environ)
    if not args.llm:
        env["CQ_LLM"] = "off"  # the offline rewriter's figures, whatever runs on this machine
    if args.cold:
        env["CQ_CACHE_DIR"] = tempfile.mkdtemp(prefix="cq-bench-")
    start = time.perf_counter()
    query = _loc.query_text(row, text)
    try:
        proc = subprocess.run(
            argv,
            input=query.encode(),
            capture_output=True,
            env=env,
            cwd=args.cq_checkout,
            timeout=args.timeout,
        )
    except subprocess.TimeoutExpired:
        proc = subprocess.CompletedProcess(argv, -1, b"", b"timed out")
    seconds = time.perf_counter() - start
    files: list[str] = []
    scopes: list[str] = []
    rewriter = "-"
    answer = ""
    if proc.returncode == -1:
        rewriter = "timeout"
        print(f"{row['instance_id']}: timed out after {args.timeout:.0f} s", file=sys.stderr)
    elif proc.stdout:
        data = json.loads(proc.stdout)
        if args.raw_dir:
            raw = Path(args.raw_dir) / f"{row['instance_id']}.{text}.json.gz"
            raw.parent.mkdir(parents=True, exist_ok=True)
            raw.write_bytes(gzip.compress(proc.stdout, mtime=0))
        rw = data["summary"].get("rewrite") or {}
        rewriter = rw.get("rewriter", "-") if rw.get("applied") else "-"
        answer = _loc.report_answer(data)
        for f in data["findings"]:
            if f["file"] not in files:
                files.append(f["file"])
            if f.get("containing_scope"):
                scope = f"{f['file']}::{f['containing_scope']}"
                if scope not in scopes:
                    scopes.append(scope)
        functions = [x for x in data["sections"] if x.get("type") == "functions"]
        if functions:  # the Relevant Functions list is cq's function-level answer
            scopes = [fn["name"] for fn in functions[0]["functions"]]
    elif proc.returncode:
        rewriter = f"error {proc.returncode}"
        print(f"{row['instance_id']}: {proc.stderr.decode().strip()[-300:]}", file=sys.stderr)
    gold = _loc.gold_files(row, tree)
    return _loc.instance(
        row, gold, files, scopes, args.keep_files, answer, seconds=round(seconds, 3), note=rewriter
    )


if __name__ == "__main__":
    raise SystemExit(main())
