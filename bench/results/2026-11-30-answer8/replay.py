"""The Answer re-chosen among each saved report's Relevant Functions by its Answer score plus
``w`` times a call signal, against the everyday set's gold.

    python bench/results/2026-11-30-answer8/replay.py REPORTS_DIR concept,title

REPORTS_DIR/ID.json is one ``cq search --format json`` per everyday question (trees under
``$CQ_EVERYDAY_TREES``).
Signals: ``callee`` (another listed function calls it), ``callee_of_better``
(one scoring better as the Answer calls it), ``delegator`` (-1: it calls another listed one).
A call is ``name(`` in a function's body; a ``__call__`` is called by its class's name. Only
reports whose Answer is the first Relevant Function by Answer score are re-chosen.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, ".")

from bench import _everyday
from bench._everyday import Place
from bench.everyday import score
from cq.index.units import file_units
from cq.rank import last_name

# the everyday trees (``bench.everyday --trees``): one directory per tuning repository
TREES = Path(os.environ.get("CQ_EVERYDAY_TREES") or sys.exit("set CQ_EVERYDAY_TREES"))
CALL = re.compile(r"([A-Za-z_]\w*)\s*(?:::<[^>]*>)?\(")
MODES = ("callee", "callee_of_better", "delegator")
WEIGHTS = (0, 0.05, 0.1, 0.15, 0.2, 0.5)


@functools.lru_cache(None)
def units(repo: str, path: str) -> dict:
    try:
        text = (TREES / repo / path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    out: dict = {}
    for u in file_units(text, "rust" if path.endswith(".rs") else "python"):
        out.setdefault(u.qualname, u)
    return out


def called(repo: str, fn: dict) -> frozenset[str]:
    u = units(repo, fn["file"]).get(fn["name"].split("::", 1)[1])
    body = u.text.split("\n", 1)[1] if u is not None and "\n" in u.text else ""
    return frozenset(CALL.findall(body))


def call_name(fn: dict) -> str:
    qual = fn["name"].split("::", 1)[1]
    parts = qual.split(".")
    return parts[-2] if parts[-1] == "__call__" and len(parts) > 1 else last_name(qual)


def signal(mode: str, b: dict, pool: list[dict], calls: dict[int, frozenset[str]]) -> float:
    nb = call_name(b)
    callers = [a for a in pool if a is not b and nb in calls[id(a)] and call_name(a) != nb]
    if mode == "callee":
        return 1.0 if callers else 0.0
    if mode == "callee_of_better":
        return 1.0 if any(c["answer_score"] > b["answer_score"] for c in callers) else 0.0
    others = {call_name(c) for c in pool if c is not b} - {nb}
    return -1.0 if others & calls[id(b)] else 0.0


def rechosen(q: dict, report: dict, w: float, mode: str) -> tuple[Place | None, Place | None]:
    """The report's Answer and the one re-chosen."""
    sections = [s for s in report["sections"] if s["type"] == "functions"]
    fns = sections[0]["functions"] if sections else []
    said = report.get("answer") or {}

    def place(f: dict) -> Place:
        return Place(f["file"], f["line"], f["name"])

    at = (said.get("file"), said.get("line"))
    orig = next((place(f) for f in fns if (f["file"], f["line"]) == at), None)
    pool = sorted(
        [f for f in fns if f.get("answer_score") is not None], key=lambda f: -f["answer_score"]
    )
    if not pool or said.get("kind") != "definition" or (pool[0]["file"], pool[0]["line"]) != at:
        return orig, orig
    calls = {id(f): called(q["repo"], f) for f in pool}
    best = max(pool, key=lambda f: f["answer_score"] + w * signal(mode, f, pool, calls))
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
    for mode in MODES:
        for w in WEIGHTS:
            good, moved = 0, []
            for q, report, was in data:
                orig, new = rechosen(q, report, w, mode)
                hit = was if new == orig else _everyday.matches(new, q["gold"], q["kind"])
                good += hit
                if hit != was:
                    moved.append(("+" if hit else "-") + q["id"])
            print(f"{mode:18s} w={w:<5} {good}/{len(data)} {' '.join(moved)}")


if __name__ == "__main__":
    main()
