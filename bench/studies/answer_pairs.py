"""Would signals that act together answer more issue titles? The conditional logit of
``answer_model`` over each candidate's signals and every product of two of them.

``answer_model`` fits one weight per signal. A title might need signals that only count
together (a short name *and* a first file, a written name *but* a test file), which a
linear score cannot express; products of two standardised signals can. This fits both, the
signals alone and with their products, with L-BFGS on the exact gradient, in sample and
leaving one repository out, on the same pools (reports listing the whole pool, as in
``answer_model``'s docstring). If the held-out figure of the products stays at or below
the shipped Answer's, the missing titles are not in these signals, however combined.

Needs numpy and scipy, which cq does not depend on; a venv that sees both and cq:

    python3 -m venv --system-site-packages /tmp/pairs && /tmp/pairs/bin/pip install -e .
    /tmp/pairs/bin/python -m bench.studies.answer_pairs \
        --data ../shared/eval/python_tuning.jsonl --raw RAW/py313 \
        --data ../shared/eval/swebench_lite_dev_tuning.jsonl --raw RAW/lite --text title
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

from bench.studies.answer_model import Pool, load
from cq.model.index_tuning import IndexTuning


class Design:
    """Pools as one standardised matrix: rows are candidates, ``seg`` their pool."""

    def __init__(self, pools: Sequence[Pool], pairs: bool) -> None:
        self.repos = [p.repo for p in pools]
        width = len(next(p.x for p in pools if p.x)[0])
        blocks = [_features(np.asarray(p.x, dtype=float).reshape(-1, width), pairs) for p in pools]
        self.gold = [
            np.isin(np.arange(len(b)), sorted(p.gold)) for p, b in zip(pools, blocks, strict=True)
        ]
        rows = np.concatenate(blocks)
        mean, spread = rows.mean(0), rows.std(0) + 1e-9
        self.blocks = [(b - mean) / spread for b in blocks]


def _features(x: np.ndarray, pairs: bool) -> np.ndarray:
    if not pairs:
        return x
    i, j = np.triu_indices(x.shape[1])
    return np.concatenate([x, x[:, i] * x[:, j]], axis=1)


def fit(design: Design, keep: Sequence[int], l2: float) -> np.ndarray:
    """Weights that maximise the gold's softmax share in each kept pool, L2-penalised."""
    keep = [k for k in keep if design.gold[k].any()]
    x = np.concatenate([design.blocks[k] for k in keep])
    gold = np.concatenate([design.gold[k] for k in keep])
    seg = np.concatenate([np.full(len(design.blocks[k]), n) for n, k in enumerate(keep)])
    n = len(keep)

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        s = x @ w
        top = np.full(n, -np.inf)
        np.maximum.at(top, seg, s)
        e = np.exp(s - top[seg])
        z = np.bincount(seg, e, n)
        zg = np.bincount(seg, e * gold, n)
        value = -np.log(zg / z).sum() / n + 0.5 * l2 * w @ w
        grad = (e / z[seg] - np.where(gold, e / zg[seg], 0.0)) @ x / n + l2 * w
        return float(value), grad

    start = np.zeros(x.shape[1])
    return minimize(loss, start, jac=True, method="L-BFGS-B", options={"maxiter": 500}).x


def right(design: Design, k: int, w: np.ndarray) -> bool:
    """Whether the weights' first candidate (ties to the earlier) is a gold function; an
    empty pool has none."""
    if not len(design.blocks[k]):
        return False
    return bool(design.gold[k][int(np.argmax(np.round(design.blocks[k] @ w, 9)))])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", action="append", required=True)
    ap.add_argument("--raw", action="append", required=True, help="one per --data")
    ap.add_argument("--text", default="title")
    ap.add_argument("--l2", default="0.01,0.1,0.3", help="comma list of penalties")
    args = ap.parse_args()
    size = IndexTuning().function_pool
    pools: list[Pool] = []
    sets: list[str] = []
    for data, raw in zip(args.data, args.raw, strict=True):
        loaded = load(data, raw, args.text, size)
        pools += loaded
        sets += [Path(data).stem] * len(loaded)
    names = sorted(set(sets))
    shipped = {
        n: sum(p.shipped in p.gold for p, s in zip(pools, sets, strict=True) if s == n)
        for n in names
    }
    print(f"{args.text}: {len(pools)} issues; shipped Answer", _per(shipped, sets))
    for pairs in (False, True):
        design = Design(pools, pairs)
        every = range(len(pools))
        label = "signals and their products" if pairs else "signals"
        for l2 in (float(v) for v in args.l2.split(",")):
            w = fit(design, every, l2)
            inside = {n: 0 for n in names}
            held = {n: 0 for n in names}
            for k in every:
                inside[sets[k]] += right(design, k, w)
            for repo in sorted(set(design.repos)):
                test = [k for k in every if design.repos[k] == repo]
                w = fit(design, [k for k in every if design.repos[k] != repo], l2)
                for k in test:
                    held[sets[k]] += right(design, k, w)
            print(
                f"{label}, l2 {l2}: in sample", _per(inside, sets), "| held out", _per(held, sets)
            )
    return 0


def _per(counts: dict[str, int], sets: list[str]) -> str:
    """``12/40 set; ...; 30/100 all``."""
    parts = [f"{v}/{sets.count(n)} {n}" for n, v in counts.items()]
    return "; ".join([*parts, f"{sum(counts.values())}/{len(sets)} all"])


if __name__ == "__main__":
    raise SystemExit(main())
