"""Does a one-line question's Answer name the function that answers it? One search each.

The tuning sets hold issues, whose titles are the nearest thing they have to a question; these
sets hold questions as an engineer or an agent asks them, each on a tuning-set tree
(``prepare_eval_trees.py``) with the functions that answer it, read off the code by hand:

- ``bench/data/questions.jsonl`` (17): written from cq's own failures in session 9, so it
  shows whether those stay fixed, not how cq does on questions it has not seen;
- ``bench/data/questions-blind.jsonl``, ``questions-blind2.jsonl``, ``questions-blind3.jsonl``
  (48 each, 24 Python and 24 Rust): written in session 10 by helpers that read the code and
  never ran cq. The first was measured before any change of that session and its failures
  were read (a class's docstring paraphrasing the question led to ``coverage.with_members``);
  the second was measured after the coverage reorder; the third last, once clean, then used
  to choose between two variants (bench/README.md, "Session 10"). None is held out any
  more: a new question set is the honest check of a change made for questions;
- ``bench/data/questions-blind4.jsonl`` (48: 24 Python over 8 repositories, 24 Rust over 7
  crates), written in session 11 the same way and first run after sessions 10's and 11's
  changes, to measure them: session 9's end (4112c3c) Answer 11, one of the first 5 33;
  session 10's end and session 11 25 and 38. Its failures were read once after that;
- ``bench/data/questions-blind5.jsonl`` (48, on the other tuning repositories), written and
  first run the same way: 22 / 36 at session 9's end, 26 / 43 now. Not read;
- ``bench/data/questions-blind6.jsonl`` (48: 24 Python over 8 repositories, 24 Rust over 8
  crates, commits the other sets use little), written the same way to check the changes
  made for issue titles: Answer 22, one of the first 5 32, before and after them. Not read;
- ``bench/data/questions-blind7.jsonl`` (48: 24 Python over 8 repositories, 24 Rust over 8
  crates, 16 trees no other set uses), written the same way to check that a how-question's
  Answer passes over constructors: Answer 23 before, 24 after, one of the first 5 39. Not read.

Do not fit numbers to any of them.

The Answer (``summary.primary``'s definition), the first Relevant Function and the first 5
are checked as ``answer_hits.py`` checks them (``_loc.function_hit``); a line marked ``5``
has a wrong Answer and a right function among the first 5.

    CQ_LLM=off python -m bench.studies.question_answers \
        [--questions bench/data/questions-blind.jsonl] [--cq-checkout DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench import _common, _loc
from bench._loc import answer_key

QUESTIONS = Path(__file__).parents[1] / "data" / "questions.jsonl"


def ask(row: dict, trees: Path, checkout: str | None = None) -> tuple[str, list[str]] | None:
    """(the Answer's ``path::Scope.name``, the Relevant Functions' in order), empty when
    none."""
    tree = trees / row["tree"]
    if not tree.is_dir():
        return None
    argv = [sys.executable, "-m", "cq", "search", row["question"], "--format", "json"]
    proc = subprocess.run(
        [*argv, "--root", str(tree)], capture_output=True, check=False, cwd=checkout
    )
    if not proc.stdout:
        return ("", [])
    data = json.loads(proc.stdout)
    primary = data["summary"].get("primary")
    answer = answer_key(data["findings"][primary]) if primary is not None else ""
    section = next((s for s in data["sections"] if s["type"] == "functions"), None)
    functions = [f["name"] for f in section["functions"]] if section else []
    return (answer, functions)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", default=str(QUESTIONS))
    _common.dir_argument(
        ap,
        "--trees",
        _common.EVAL_TREES,
        "the trees at the issues' base commits, DIR/<instance_id> (bench/prepare_eval_trees.py)",
    )
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cq-checkout", help="measure the cq package of this source tree (runs in it)")
    args = ap.parse_args()
    rows = [json.loads(ln) for ln in Path(args.questions).read_text().splitlines() if ln]
    trees = Path(args.trees)
    with ThreadPoolExecutor(args.jobs) as pool:
        got = list(pool.map(lambda r: ask(r, trees, args.cq_checkout), rows))
    asked = answered = first_hit = five_hit = 0
    for row, result in zip(rows, got, strict=True):
        if result is None:
            print(f"- {row['tree']}: no tree", file=sys.stderr)
            continue
        answer, functions = result
        hit = bool(answer and _loc.function_hit([answer], row["answers"]))
        asked += 1
        answered += hit
        first_hit += bool(functions and _loc.function_hit(functions[:1], row["answers"]))
        in_five = bool(functions and _loc.function_hit(functions[:5], row["answers"]))
        five_hit += in_five
        mark = "ok " if hit else "5  " if in_five else "no "
        print(f"{mark} {row['question']} ({row['tree']}): {answer or '-'}")
    n = max(1, asked)
    share = f"Answer {100 * answered / n:.1f}%, first function {100 * first_hit / n:.1f}%"
    share += f", one of the first 5 functions {100 * five_hit / n:.1f}%"
    print(f"{asked} questions; {share}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
