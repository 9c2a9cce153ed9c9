"""Each everyday question's full JSON report, for ``replay.py``: one ``cq search --format json``
per question over a copy of its tree's warm index (as ``bench.everyday --cache warm`` runs it,
``CQ_SERVER=0``, ``CQ_LLM=off``), two at a time.

    python bench/results/2026-11-30-answer8/reports.py INDEXES OUT concept,title

INDEXES/<repo> is a cache holding the tree's index (made here by ``cq index`` when missing);
OUT/<id>.json the reports. Run from the checkout whose cq is measured.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# the everyday trees (``bench.everyday --trees``): one directory per tuning repository
TREES = Path(os.environ.get("CQ_EVERYDAY_TREES") or sys.exit("set CQ_EVERYDAY_TREES"))


def env(cache: Path) -> dict[str, str]:
    return dict(os.environ, CQ_SERVER="0", CQ_LLM="off", CQ_CACHE_DIR=str(cache))


def main() -> None:
    indexes, out, kinds = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3].split(",")
    lines = Path("bench/data/everyday.jsonl").read_text().splitlines()
    questions = [q for q in map(json.loads, lines) if q["kind"] in kinds]
    out.mkdir(parents=True, exist_ok=True)
    for repo in sorted({q["repo"] for q in questions}):
        if not (indexes / repo).exists():
            argv = [sys.executable, "-m", "cq", "index", "--root", str(TREES / repo)]
            subprocess.run(argv, env=env(indexes / repo), check=True, capture_output=True)

    def one(q: dict) -> None:
        with tempfile.TemporaryDirectory(prefix="cq-report-") as tmp:
            shutil.copytree(indexes / q["repo"], tmp, dirs_exist_ok=True)
            argv = [sys.executable, "-m", "cq", "search", "--format", "json", "--limit", "50"]
            argv += ["--root", str(TREES / q["repo"]), "--", q["query"]]
            ran = subprocess.run(argv, capture_output=True, env=env(Path(tmp)))
            (out / f"{q['id']}.json").write_bytes(ran.stdout)
        print(q["id"], flush=True)

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(one, questions))


if __name__ == "__main__":
    main()
