"""Same command, same tree, same report: the Answer and the first ten findings of three runs.

For each of the golden queries (``bench/golden.py``: the Python set on a Python tree, the
Rust set on a Rust one, and the issue text read from stdin) three runs: the first from a
fresh cache dir, the second in that cache right after it (what the first left behind: its
index, its parses, Pyrefly's answers; ``--settle S``: S seconds after it, for what it left
to the background to finish), the third from another fresh cache dir. Each run's
JSON ``answer`` (less nothing: ``provisional`` included) and its first ten findings (file,
line, category) must be equal; every query that differs is listed with the runs' answers.
Anything a search leaves to the background (the index's first build, Pyrefly's answers)
shows here as a difference.

The environment is the caller's (``CQ_SEMANTIC``, ``CQ_SERVER``, ...), so the same check runs
with the semantic stage on (the default) or off, one-shot or through the server (whose
background asks Pyrefly for what a search left pending: give it a private
``XDG_RUNTIME_DIR`` and stop it after, ``cq server stop``).

    python -m bench.stability --tree moto=/work/trees/head/moto
    python -m bench.stability --tree moto=/work/trees/head/moto --busy 1
    python -m bench.stability --tree moto=../trees/head/moto --only "how are buckets created?"
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench._common import cq_command, scratch_dir
from bench.golden import _PYTHON_QUERIES, _RUST_QUERIES, _STDIN_ISSUE, burners

Seen = tuple[object, tuple[tuple[str, int, str], ...]]


def _seen(root: str, args: tuple[str, ...], cache: str, stdin: str | None) -> Seen:
    """The run's JSON answer and its first ten findings, or its error."""
    argv = [*cq_command(), "search", *args, "--root", root, "--format", "json"]
    env = {**os.environ, "CQ_CACHE_DIR": cache, "CQ_LLM_URL": "http://127.0.0.1:9/"}
    proc = subprocess.run(
        argv, input=stdin.encode() if stdin else None, capture_output=True, env=env
    )
    if proc.returncode not in (0, 1):
        return {"error": proc.stderr.decode(errors="replace")[-300:]}, ()
    data = json.loads(proc.stdout)
    first = tuple((f["file"], f["line"], f["category"]) for f in data["findings"][:10])
    return data.get("answer"), first


def check(
    trees: dict[str, str], also: tuple[str, ...] = (), golden: bool = True, settle: float = 0.0
) -> list[str]:
    """Lines saying, per query (the golden set's unless not ``golden``, and ``also``),
    whether its three runs agree."""
    lines: list[str] = []
    for name, root in trees.items():
        rust = any(Path(root).rglob("*.rs")) and not any(Path(root).rglob("*.py"))
        jobs = [(" ".join(q), q, None) for q in (_RUST_QUERIES if rust else _PYTHON_QUERIES)]
        if not rust:
            jobs.append(("- (issue text)", ("-",), _STDIN_ISSUE))
        jobs = [*(jobs if golden else []), *((q, (q,), None) for q in also)]
        for label, args, stdin in jobs:
            with scratch_dir() as one, scratch_dir() as two:
                runs = [_seen(root, args, one, stdin)]  # fresh
                time.sleep(settle)  # what it left to the background finishes meanwhile
                runs.append(_seen(root, args, one, stdin))  # after it, in its cache
                runs.append(_seen(root, args, two, stdin))  # fresh again
            same = runs[0] == runs[1] == runs[2]
            lines.append(f"{'same  ' if same else 'DIFFER'} {name}: {label}")
            if not same:
                for i, (answer, first) in enumerate(runs):
                    lines.append(f"    run {i + 1}: answer {json.dumps(answer)}")
                    lines.append(f"           first {[f'{f}:{n} {c}' for f, n, c in first]}")
            print(lines[-1] if same else "\n".join(lines[-7:]), file=sys.stderr, flush=True)
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=DIR", required=True)
    parser.add_argument("--busy", type=int, default=0, metavar="N", help="CPU burners")
    parser.add_argument(
        "--also", action="append", default=[], metavar="QUERY", help="a query of the tree's own"
    )
    parser.add_argument(
        "--settle", type=float, default=0.0, metavar="S", help="seconds before the second run"
    )
    parser.add_argument(
        "--only", action="append", default=[], metavar="QUERY", help="as --also, without golden's"
    )
    args = parser.parse_args()
    trees = dict(spec.partition("=")[::2] for spec in args.tree)
    with burners(args.busy):
        lines = check(trees, (*args.also, *args.only), not args.only, args.settle)
    differ = sum(1 for line in lines if line.startswith("DIFFER"))
    total = sum(1 for line in lines if not line.startswith(" "))
    print("\n".join(lines))
    print(f"{total - differ} same, {differ} differ (answer and first ten findings, 3 runs each)")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
