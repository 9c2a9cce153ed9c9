"""Two sets of saved reports (answer8's ``reports.py``) scored as ``bench.everyday`` scores
them: each question's Answer@1 and top-5 before and after, and the questions that moved.

    python bench/results/2026-11-30-answer12/compare_reports.py BEFORE_DIR AFTER_DIR concept,title
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, ".")

from bench import _everyday
from bench.everyday import score


def scored(reports: Path, q: dict) -> tuple[bool, bool] | None:
    path = reports / f"{q['id']}.json"
    if not path.exists() or not path.stat().st_size:
        return None
    ran = subprocess.CompletedProcess([], 0, path.read_bytes(), b"")
    s = score(_everyday.Question(**q), ran, 0)
    return bool(s.ans), bool(s.top5)


def main() -> None:
    before, after, kinds = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3].split(",")
    totals: dict[str, list[int]] = {}
    for line in Path("bench/data/everyday.jsonl").read_text().splitlines():
        q = json.loads(line)
        if q["kind"] not in kinds:
            continue
        a, b = scored(before, q), scored(after, q)
        if a is None or b is None:
            print(f"{q['id']}: missing report")
            continue
        t = totals.setdefault(q["kind"], [0, 0, 0, 0, 0])
        t[0] += 1
        t[1], t[2], t[3], t[4] = t[1] + a[0], t[2] + a[1], t[3] + b[0], t[4] + b[1]
        if a != b:
            print(f"{q['id']}: Answer {a[0]} -> {b[0]}, top-5 {a[1]} -> {b[1]}")
    for kind, (n, a1, a5, b1, b5) in totals.items():
        print(f"{kind}: n={n} before {a1} / {a5}, after {b1} / {b5} (Answer@1 / top-5)")


if __name__ == "__main__":
    main()
