"""The ``naming`` weight held out by repository, on reports of the shipped code: each
Relevant Function's Answer score re-weighed as ``answer_score + (w - 0.4) * naming`` (the
report keeps each signal's value), the Answer re-chosen among the listed functions, for
``w`` over a grid; each repository's weight chosen on the other ten (ties: the smallest).

    python bench/results/2026-11-30-answer9/loo_naming.py REPORTS_DIR concept,title [SHIPPED]

REPORTS_DIR/ID.json: one ``cq search --format json`` per everyday question at the shipped
code (answer8's ``reports.py``), SHIPPED the weight they ran at. Only reports whose Answer is
the first Relevant Function by Answer score are re-chosen. What the re-weighing cannot see:
an Answer that only declares a method brings its overrides into the pool
(``cq.index.apply._overrides``), so a weight that changes which function leads changes the
pool too (the README: gluonts-10 at 2.0).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, ".")

from bench import _everyday
from bench._everyday import Place
from bench.everyday import score

SHIPPED = float(sys.argv[3]) if len(sys.argv) > 3 else 1.5  # naming in the reports
WEIGHTS = (0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5)


def rechosen(report: dict, w: float) -> tuple[Place | None, Place | None]:
    sections = [s for s in report["sections"] if s["type"] == "functions"]
    fns = sections[0]["functions"] if sections else []
    said = report.get("answer") or {}

    def place(f: dict) -> Place:
        return Place(f["file"], f["line"], f["name"])

    at = (said.get("file"), said.get("line"))
    orig = next((place(f) for f in fns if (f["file"], f["line"]) == at), None)
    pool = [f for f in fns if f.get("answer_score") is not None]
    first = max(pool, key=lambda f: f["answer_score"], default=None)
    if first is None or said.get("kind") != "definition" or (first["file"], first["line"]) != at:
        return orig, orig
    best = max(pool, key=lambda f: f["answer_score"] + (w - SHIPPED) * f["scores"]["naming"])
    return orig, place(best)


def main() -> None:
    reports, kinds = Path(sys.argv[1]), sys.argv[2].split(",")
    data = []
    for line in Path("bench/data/everyday.jsonl").read_text().splitlines():
        q = json.loads(line)
        path = reports / f"{q['id']}.json"
        if q["kind"] in kinds and path.exists() and path.stat().st_size:
            raw = path.read_bytes()
            ran = subprocess.CompletedProcess([], 0, raw, b"")
            data.append((q, json.loads(raw), score(_everyday.Question(**q), ran, 0).ans))
    hits: dict[float, dict[str, bool]] = {}
    for w in WEIGHTS:
        moved = []
        for q, report, was in data:
            orig, new = rechosen(report, w)
            hit = was if new == orig else _everyday.matches(new, q["gold"], q["kind"])
            hits.setdefault(w, {})[q["id"]] = hit
            if hit != was:
                moved.append(("+" if hit else "-") + q["id"])
        print(f"w={w:<4} {sum(hits[w].values())}/{len(data)} {' '.join(moved)}")
    repos = sorted({q["repo"] for q, _, _ in data})
    total, chosen = 0, []
    for repo in repos:

        def mine(i: str, repo: str = repo) -> bool:
            return i.rsplit("-", 1)[0] == repo

        best = max(WEIGHTS, key=lambda w: (sum(h for i, h in hits[w].items() if not mine(i)), -w))
        total += sum(h for i, h in hits[best].items() if mine(i))
        chosen.append(f"{repo}:{best}")
    concept = {q["id"] for q, _, _ in data if q["kind"] == "concept"}
    print(f"held out {total}/{len(data)}  {' '.join(chosen)}")
    print(f"(concept questions: {len(concept)})")


if __name__ == "__main__":
    main()
