"""Is the Answer of an issue title within reach of its candidates' signals? A learned check.

The Answer (``cq/index/functions.py``) is the best of the function pool by hand-weighted
signals. This asks whether any linear weighting of those signals, and of a few more a title
could carry (the share of a candidate's name the title asks, its name or its class spelled
by adjacent title words, "Random Gaussian Noise" for ``RandGaussianNoise``, ``__init__``,
private and special names, classes, the fused rank), picks the edited function more often
when fitted on other repositories: a conditional logit (softmax over one issue's pool, the
gold functions its positives, L2-penalised, gradient descent) scored leaving one repository
out, against the shipped Answer on the same pools.

It reads reports that list the whole pool with each candidate's signals (``scores``), so
first run ``bench.localization`` with a user profile (``~/.config/cq/profiles/fn40.toml``:
``[index]`` ``functions = 40``) and ``--raw-dir``:

    python -m bench.localization --data ../shared/eval/python_tuning.jsonl --trees $CQ_BENCH_TREES \
        --text full,title --modes rewrite --extra-args='--profile fn40' --raw-dir RAW/py313
    python -m bench.studies.answer_model --data ../shared/eval/python_tuning.jsonl \
        --raw RAW/py313 --data ../shared/eval/swebench_lite_dev_tuning.jsonl --raw RAW/lite
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import re
from collections.abc import Collection, Sequence
from pathlib import Path

from bench import _loc
from cq.index.functions import Scored, asked, best_answer, ordered
from cq.index.query import asked_words
from cq.model.index_tuning import IndexTuning
from cq.rewrite import stem, understand
from cq.rewrite.words import subwords

# the shipped signals as the report keeps them (``functions.measured``)
SIGNALS = (
    "fused",
    "frame",
    "written",
    "owner",
    "inside",
    "covers",
    "file",
    "test",
    "size",
    "titled",
    "message",
)
EXTRA = (
    "named_all",
    "named_share",
    "soft_name",
    "soft_owner",
    "init",
    "special",
    "private",
    "class",
    "fused_rank",
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


class Pool:
    """One issue's listed pool: each candidate's features, which are gold, the shipped
    Answer's index."""

    def __init__(self, row: dict, report: dict, text: str, pool: int) -> None:
        self.repo = row["repo"]
        section = next((s for s in report["sections"] if s["type"] == "functions"), None)
        functions = (section["functions"] if section else [])[:pool]
        self.gold = {
            i
            for i, f in enumerate(functions)
            if _loc.function_hit([f["name"]], row["gold_functions"])
        }
        scored = [
            Scored(at=i, score=0.0, signals=f["scores"], evidence=())
            for i, f in enumerate(functions)
        ]
        self.shipped = first.at if (first := best_answer(ordered(scored))) else None
        query = _loc.query_text(row, text)
        read = understand(query)
        question = asked(read, asked_words(read, (), IndexTuning()))
        title = next((ln for ln in query.splitlines() if ln.strip()), "")
        joined = _joins(title)
        by_fused = sorted(range(len(functions)), key=lambda i: -functions[i]["scores"]["fused"])
        fused_rank = {i: r for r, i in enumerate(by_fused)}
        self.x = [
            [f["scores"].get(k, 0.0) for k in SIGNALS]
            + _extra(f, question.stems.keys(), joined, fused_rank[i])
            for i, f in enumerate(functions)
        ]


def _joins(line: str) -> set[str]:
    """Each word of ``line`` and each run of 2-4 adjacent words joined, lowercased, ``_``
    dropped: the spellings a title gives a name it writes as words."""
    words = [w.lower().replace("_", "") for w in _WORD.findall(line)]
    return {"".join(words[i : i + n]) for n in (1, 2, 3, 4) for i in range(len(words) - n + 1)}


def _extra(f: dict, stems: Collection[str], joined: set[str], fused_rank: int) -> list[float]:
    qual = f["name"].split("::", 1)[1] if "::" in f["name"] else f["name"]
    parts = qual.replace("::", ".").split(".")
    name, owner = parts[-1], parts[-2] if len(parts) > 1 else ""
    said = {stem(p) for p in subwords(name) if len(p) > 1 and not p.isdigit()}
    asked_ = {s for s in said if s in stems}
    return [
        float(bool(said) and asked_ == said),
        len(asked_) / len(said) if said else 0.0,
        float(len(name) > 3 and name.lower().replace("_", "") in joined),
        float(bool(owner) and owner.lower().replace("_", "") in joined),
        float(name == "__init__"),
        float(name.startswith("__") and name != "__init__"),
        float(name.startswith("_") and not name.startswith("__")),
        float(f.get("kind") == "class"),
        1.0 / (1 + fused_rank),
    ]


def fit(pools: Sequence[Pool], l2: float, steps: int = 250, rate: float = 0.5) -> list[float]:
    """The conditional logit's weights: the gold's share of each pool's softmax, maximised."""
    d = len(SIGNALS) + len(EXTRA)
    w = [0.0] * d
    for _ in range(steps):
        grad = [0.0] * d
        n = 0
        for p in pools:
            if not p.gold:
                continue
            n += 1
            scores = [sum(a * b for a, b in zip(w, x, strict=True)) for x in p.x]
            top = max(scores)
            e = [math.exp(s - top) for s in scores]
            z = sum(e)
            prob = [v / z for v in e]
            gold = sum(prob[j] for j in p.gold)
            for j, x in enumerate(p.x):
                q = prob[j] - (prob[j] / gold if j in p.gold else 0.0)
                for k in range(d):
                    grad[k] += q * x[k]
        w = [wk - rate * (g / max(n, 1) + l2 * wk) for wk, g in zip(w, grad, strict=True)]
    return w


def picks(p: Pool, w: list[float]) -> bool:
    if not p.x:
        return False
    scores = [round(sum(a * b for a, b in zip(w, x, strict=True)), 9) for x in p.x]
    return max(range(len(p.x)), key=lambda j: (scores[j], -j)) in p.gold


def load(data: str, raw: str, text: str, pool: int) -> list[Pool]:
    out = []
    for row in _loc.load_rows(data):
        path = Path(raw) / f"{row['instance_id']}.{text}.json.gz"
        if row.get("gold_functions") and path.is_file():
            out.append(Pool(row, json.loads(gzip.decompress(path.read_bytes())), text, pool))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", action="append", required=True)
    ap.add_argument("--raw", action="append", required=True, help="one per --data")
    ap.add_argument("--text", default="title")
    ap.add_argument("--l2", default="0.01,0.1", help="comma list of penalties")
    args = ap.parse_args()
    pool = IndexTuning().function_pool
    pools = [
        p
        for data, raw in zip(args.data, args.raw, strict=True)
        for p in load(data, raw, args.text, pool)
    ]
    repos = sorted({p.repo for p in pools})
    n = len(pools) or 1
    shipped = sum(p.shipped in p.gold for p in pools)
    print(f"{args.text}: {len(pools)} issues, shipped Answer {shipped} ({100 * shipped / n:.1f}%)")
    for l2 in (float(x) for x in args.l2.split(",")):
        every = fit(pools, l2)
        inside = sum(picks(p, every) for p in pools)
        held = 0
        rows = []
        for repo in repos:
            test = [p for p in pools if p.repo == repo]
            w = fit([p for p in pools if p.repo != repo], l2)
            got = sum(picks(p, w) for p in test)
            held += got
            rows.append(f"{repo} {got}/{sum(p.shipped in p.gold for p in test)}/{len(test)}")
        print(
            f"l2 {l2}: in sample {inside} ({100 * inside / n:.1f}%), "
            f"held out {held} ({100 * held / n:.1f}%)"
        )
        print("  learned / shipped / issues:", "; ".join(rows))
        names = (*SIGNALS, *EXTRA)
        print("  weights:", ", ".join(f"{k} {v:.2f}" for k, v in zip(names, every, strict=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
