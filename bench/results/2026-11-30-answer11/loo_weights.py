"""A signal's weight held out by repository, on reports of the shipped code: each Relevant
Function's Answer score re-weighed as ``answer_score + (w - SHIPPED) * signal`` (the report
keeps each signal's value), the Answer re-chosen among the listed functions, for ``w`` over a
grid; each repository's weight chosen on the other ten (ties: the one nearest 0).

    python bench/results/2026-11-30-answer11/loo_weights.py REPORTS_DIR concept,title SIGNAL SHIPPED

REPORTS_DIR/ID.json: one ``cq search --format json`` per everyday question at the shipped
code (answer8's ``reports.py``). Only reports whose Answer is the first Relevant Function by
Answer score are re-chosen (as answer9's ``loo_naming.py``). Per concept and per title the
in-sample and held-out counts are printed.
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

WEIGHTS = (0.0, -0.1, -0.25, -0.5, -0.75, -1.0, -1.5, -2.0)


def rechosen(report: dict, signal: str, w: float, shipped: float) -> tuple[Place | None, ...]:
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
    best = max(pool, key=lambda f: f["answer_score"] + (w - shipped) * f["scores"].get(signal, 0))
    return orig, place(best)


def main() -> None:
    reports, kinds = Path(sys.argv[1]), sys.argv[2].split(",")
    signal, shipped = sys.argv[3], float(sys.argv[4])
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
            orig, new = rechosen(report, signal, w, shipped)
            hit = was if new == orig else _everyday.matches(new, q["gold"], q["kind"])
            hits.setdefault(w, {})[q["id"]] = hit
            if hit != was:
                moved.append(("+" if hit else "-") + q["id"])
        print(f"w={w:<5} {sum(hits[w].values())}/{len(data)} {' '.join(moved)}")
    repos = sorted({q["repo"] for q, _, _ in data})
    kind = {q["id"]: q["kind"] for q, _, _ in data}
    held: dict[str, bool] = {}
    chosen = []
    for repo in repos:

        def mine(i: str, repo: str = repo) -> bool:
            return i.rsplit("-", 1)[0] == repo

        def fit(w: float, repo: str = repo) -> tuple[int, float]:
            return sum(h for i, h in hits[w].items() if not mine(i)), w  # ties: nearest 0

        best = max(WEIGHTS, key=fit)
        held.update({i: h for i, h in hits[best].items() if mine(i)})
        chosen.append(f"{repo}:{best}")
    for k in sorted(set(kind.values())):
        ids = [i for i in kind if kind[i] == k]
        inside = sum(hits[shipped][i] for i in ids)
        print(
            f"{k}: in sample {inside}/{len(ids)}, held out {sum(held[i] for i in ids)}/{len(ids)}"
        )
    print(" ".join(chosen))


if __name__ == "__main__":
    main()
