"""Localization on a larger tree: each issue searched over a tree of several repositories.

The tuning trees are a few hundred files; the held-out repositories are thousands, where caps
and distractors bite. ``$CQ_BENCH_INDEX_TREE`` (``index_speed.py``'s tree) holds seven tuning
repositories side by side (``pyro/``, ``MONAI/``, ...): every tuning issue of those
repositories is searched over the whole tree, its gold files looked up under the
repository's folder (at the bench tree's commit, not the issue's: a gold file missing there
leaves the issue out). Reports file Acc@1 / Acc@5 and how many searches hit a cap.

    CQ_LLM=off python -m bench.studies.scale_localization --text full
    CQ_LLM=off python -m bench.studies.scale_localization --text full -- --max-files 1000 \\
        --max-total-matches 10000       # the interactive caps, for a before
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from bench import _common, _loc

FOLDERS = {  # repository -> its folder in the bench tree (bench/prepare_eval_trees.py)
    "pyro-ppl/pyro": "pyro",
    "Project-MONAI/MONAI": "MONAI",
    "Lightning-AI/pytorch-lightning": "pytorch-lightning",
    "allenai/allennlp": "allennlp",
    "awslabs/gluonts": "gluonts",
    "tensorpack/tensorpack": "tensorpack",
    "pytorch/ignite": "ignite",
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _common.dir_argument(ap, "--root", _common.INDEX_TREE, "the seven-repository tree")
    ap.add_argument("--data", default="../shared/eval/python_tuning.jsonl")
    ap.add_argument("--text", default="full", choices=("full", "title"))
    ap.add_argument("extra", nargs="*", help="more cq search arguments, after --")
    args = ap.parse_args()
    root = Path(args.root)
    rows = [r for r in _loc.load_rows(args.data) if r["repo"] in FOLDERS]
    n = acc1 = acc5 = capped = 0
    for row in rows:
        folder = FOLDERS[row["repo"]]
        gold = [f"{folder}/{g}" for g in row["gold_code_files"] if (root / folder / g).exists()]
        if not gold:
            continue
        argv = [sys.executable, "-m", "cq", "search", "-", "--root", str(root)]
        argv += ["--format", "json", "--limit", "100", *args.extra]
        query = _loc.query_text(row, args.text).encode()
        proc = subprocess.run(argv, input=query, capture_output=True, check=False)
        data = json.loads(proc.stdout) if proc.stdout else None
        files = list(dict.fromkeys(f["file"] for f in data["findings"])) if data else []
        n += 1
        acc1 += set(gold) <= set(files[:1])
        acc5 += set(gold) <= set(files[:5])
        capped += bool(data) and data["summary"]["stats"]["caps_hit"] != "none"
    print(f"{n} issues over {root}: file Acc@1 {acc1}, Acc@5 {acc5}; a cap hit {capped} times")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
