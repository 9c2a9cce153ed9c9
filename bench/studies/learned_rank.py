"""(Study, not a cq feature) Would a learned ranker over every file signal beat the fusion?

For every issue of ``index_fusion.py``'s signal files, the fused first K files (``fuse.
fused_files``, before the reread) get 18 features: the fused score and rank, rg's, the index's,
the named and defined files' reciprocal ranks, the index's best file and unit BM25 scores
(relative to the issue's best), how many of the index's first 50 units the file holds, its
size, its best function's share of the question (``coverage.coverage`` over the K files'
functions, as ``files_by_coverage`` reads them), whether it has functions, its role (test /
doc / other), whether it is a package file (``__init__.py``, ``mod.rs``, ``lib.rs``,
``main.rs``), the share of the asked words its path holds, and whether the query is a title.
A linear ranker is trained listwise (softmax over each issue's K files, the gold files
sharing the target; L2; Adam) on every repository but one and scored on that one
(leave-one-repository-out), per set; the baseline is the order a search reports
(``index_fusion.orders``, reread included).

    python -m bench.studies.learned_rank --signals py-full.jsonl --signals py-title.jsonl \\
        --signals lite-full.jsonl --signals lite-title.jsonl
    python -m bench.studies.learned_rank --signals rs-full.jsonl --signals rs-title.jsonl

Needs numpy (a study dependency, not cq's: ``pip install numpy``). Figures in
bench/README.md ("Session 11").
"""

from __future__ import annotations

import argparse
import math
import posixpath
from collections import Counter, defaultdict
from pathlib import Path

import msgspec
import numpy as np

from bench import _common
from bench.studies import index_fusion as fusion_bench
from cq.index.coverage import coverage
from cq.index.fuse import fused_files, fusion_for, index_file_order
from cq.index.words import split_words
from cq.rank import path_role
from cq.rewrite import stem

PACKAGE_FILES = ("__init__.py", "mod.rs", "lib.rs", "main.rs")


class Issue(msgspec.Struct):
    id: str
    repo: str
    group: str  # set/text
    gold: list[str]
    files: list[str]  # the K candidates, fused order
    features: list[list[float]]
    reported: list[str]  # the order a search reports


def issue_of(s: fusion_bench.Signals, reread: fusion_bench.Reread, k: int) -> Issue:
    fusion = fusion_for(s.rg_files, s.hits)
    ix = index_file_order(s.hits, fusion)
    tests = s.focus == "tests"
    votes = fused_files(s.rg_files, ix, fusion, s.hits, tests_wanted=tests, sizes=s.sizes)[:k]
    words, reader = reread.words(s), reread.reader(s)
    held = [reader.functions(v.file) for v in votes]
    shares = iter(coverage(words, [h for file_held in held for h in file_held]))
    best = [max((next(shares) for _ in file_held), default=0.0) for file_held in held]
    asked = {stem(w): x for w, x in words.items()}
    total = sum(asked.values()) or 1.0
    top_file = max((h.score for h in s.hits.files), default=0.0) or 1.0
    top_unit = max((h.score for h in s.hits.units), default=0.0) or 1.0
    file_score: dict[str, float] = {}
    unit_score: dict[str, float] = {}
    units: Counter[str] = Counter()
    for h in s.hits.files:
        file_score.setdefault(h.path, h.score / top_file)
    for h in s.hits.units[:50]:
        unit_score.setdefault(h.path, h.score / top_unit)
        units[h.path] += 1

    def recip(rank: int) -> float:
        return 1.0 / (5 + rank) if rank else 0.0

    features = []
    for i, v in enumerate(votes):
        role = path_role(v.file)
        path_words = {stem(w) for w in split_words(v.file.replace("/", " ")).split()}
        features.append(
            [
                v.fused,
                1.0 / (1 + i),
                recip(v.rank_rg),
                recip(v.rank_index),
                recip(v.rank_named),
                recip(v.rank_defined),
                file_score.get(v.file, 0.0),
                unit_score.get(v.file, 0.0),
                min(units[v.file], 10) / 10,
                math.log(max(s.sizes.get(v.file, 10_000), 1_000) / 10_000),
                best[i],
                float(bool(held[i])),
                float(role == "test"),
                float(role == "doc"),
                float(role not in ("src", "test", "doc")),
                float(posixpath.basename(v.file) in PACKAGE_FILES),
                sum(x for w, x in asked.items() if w in path_words) / total,
                float(s.text == "title"),
            ]
        )
    reported = fusion_bench.orders(s, None)["fused"][0]
    return Issue(
        id=s.id,
        repo=s.repo,
        group=f"{s.set}/{s.text}",
        gold=list(s.gold),
        files=[v.file for v in votes],
        features=features,
        reported=reported,
    )


def fit(issues: list[Issue], l2: float, steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Listwise softmax ranker on standardised features: (mean, scale, weights)."""
    lists = []
    for i in issues:
        target = np.array([f in i.gold for f in i.files], float)
        if target.sum():
            lists.append((np.array(i.features, float), target / target.sum()))
    stacked = np.vstack([x for x, _ in lists])
    mean, scale = stacked.mean(0), stacked.std(0) + 1e-9
    lists = [((x - mean) / scale, t) for x, t in lists]
    w = np.zeros(stacked.shape[1])
    m, v = np.zeros_like(w), np.zeros_like(w)
    for step in range(1, steps + 1):  # Adam, lr 0.05 (hand-set; 300 steps converge here)
        grad = l2 * w
        for x, t in lists:
            s = x @ w
            p = np.exp(s - s.max())
            grad += x.T @ (p / p.sum() - t) / len(lists)
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad * grad
        w -= 0.05 * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return mean, scale, w


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--signals", action="append", required=True, help="index_fusion.py signals")
    _common.dir_argument(
        ap,
        "--trees",
        _common.EVAL_TREES,
        "the trees at the issues' base commits, DIR/<instance_id> (bench/prepare_eval_trees.py)",
    )
    ap.add_argument(
        "--eval-dir", default=str(Path(__file__).resolve().parent.parent.parent / "shared" / "eval")
    )
    ap.add_argument("--k", type=int, default=20, help="candidates: the fused first K files")
    ap.add_argument("--l2", type=float, default=0.01)
    ap.add_argument("--steps", type=int, default=300)
    args = ap.parse_args()
    reread = fusion_bench.Reread(Path(args.trees).resolve(), Path(args.eval_dir))
    fusion_bench.REREAD = reread
    issues = [
        issue_of(msgspec.json.decode(line, type=fusion_bench.Signals), reread, args.k)
        for path in args.signals
        for line in Path(path).read_text().splitlines()
    ]
    right: dict[str, Counter[str]] = defaultdict(Counter)
    for repo in sorted({i.repo for i in issues}):
        mean, scale, w = fit([i for i in issues if i.repo != repo], args.l2, args.steps)
        for i in issues:
            if i.repo != repo:
                continue
            c = right[i.group]
            c["n"] += 1
            if not i.gold:
                continue
            scores = (np.array(i.features, float) - mean) / scale @ w if i.files else []
            ranked = [i.files[j] for j in sorted(range(len(i.files)), key=lambda j: -scores[j])]
            gold = set(i.gold)
            for name, order in (("reported", i.reported), ("learned", ranked)):
                c[f"{name}1"] += gold <= set(order[:1])
                c[f"{name}5"] += gold <= set(order[:5])
                if len(gold) == 1:
                    c[f"{name}5 single"] += gold <= set(order[:5])
            c["single"] += len(gold) == 1
    print("| set | n | Acc@1 reported / learned | Acc@5 | Acc@5, fixed in one file (n) |")
    print("|---|---|---|---|---|")
    for group, c in right.items():
        n, one = c["n"], max(1, c["single"])

        def pct(key: str, of: int, c: Counter[str] = c) -> str:
            return f"{100 * c[key] / of:.1f}"

        print(
            f"| {group} | {n} | {pct('reported1', n)} / {pct('learned1', n)} | "
            f"{pct('reported5', n)} / {pct('learned5', n)} | "
            f"{pct('reported5 single', one)} / {pct('learned5 single', one)} ({c['single']}) |"
        )
    mean, scale, w = fit(issues, args.l2, args.steps)
    print("\nweights on all issues (per feature's unit):", np.round(w / scale, 3).tolist())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
