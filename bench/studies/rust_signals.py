"""Measure candidate Rust localization signals before building them into the fusion.

In: signal files of ``bench/studies/index_fusion.py`` (texts and titles of rust_tuning), the issue
rows and their trees (each issue's index in CQ_CACHE_DIR, built if missing). Out, on stdout:

1. **Candidate file lists** a Rust text could add as a fused list, each with how many texts
   get one, its files, how many are gold and how many of those gold files the fused order
   (``cq/index/fuse.py``, today's defaults) does not already have in its first 5:
   ``qualified`` (a ``Type::method`` the text writes, defined in at most 3 non-test files),
   ``types`` (a backticked UpperCamelCase name defined as a struct, enum or trait in at most
   3), ``ticked_fns`` (a backticked snake_case name defined as a fn in at most 2),
   ``stems`` (a name the text writes, snake-cased, equal to a file's stem or a ``mod.rs``
   directory, at most 2 files), ``rare_names`` (a name written as code that occurs in at most
   3 non-test files), ``test_to_source`` (the rg or index first-10 test files mapped to the
   source file of the same name).
2. **Gold rate of the fused first 10 files by feature** (the order without the file prior
   of ``fuse.file_prior``, whose evidence this is): file size, the crate the first 10's fused
   mass falls in, units among the index's hits, which order found the file.
3. **Crate coherence**: today's fused order (with the prior) where a file outside the first
   10's main crate scores ``c`` times as much, file Acc@1/5/10 per set and leave-one-
   repository-out (Acc@5 and Acc@10). Results: ``bench/results/rust-accuracy.md`` (session 4).

    CQ_CACHE_DIR=/tmp/me/cache python -m bench.studies.rust_signals \
        --signals /tmp/me/full.jsonl --signals /tmp/me/title.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

import msgspec

from bench import _common, _loc
from bench.studies.index_fusion import Signals, orders
from cq.index.build import update_index
from cq.index.fuse import FileVote, fused_files, fusion_for, index_file_order
from cq.index.mentions import code_names
from cq.rank import path_role
from cq.rewrite import extract_mentions

_QUALIFIED = re.compile(r"\b([A-Z][A-Za-z0-9]*)::([a-z_][a-z0-9_]*)\b")
_TICKED_TYPE = re.compile(r"`([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)*)`")
_TICKED_FN = re.compile(r"`([a-z_][a-z0-9_]{3,})(?:\(\))?`")
_CAMEL = re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b")
_SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
_CRATE_DIRS = {"src", "examples", "tests", "benches"}
_ROOTS = {"mod.rs", "lib.rs", "main.rs"}


class Tree:
    """One issue's tree: its non-test .rs sources (text by path) and its index."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.sources: dict[str, str] = {}
        for dirpath, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d != "target"]
            for name in files:
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                if name.endswith(".rs") and path_role(rel) != "test":
                    self.sources[rel] = Path(dirpath, name).read_text(errors="replace")
        self.index = update_index(root)[0].index

    def defined(self, pattern: str, kinds: set[str]) -> set[str]:
        """Non-test files with a unit of one of ``kinds`` whose qualname matches ``pattern``."""
        import tantivy

        query = tantivy.Query.regex_query(self.index.schema, "qualname", pattern)
        searcher = self.index.searcher()
        out = set()
        for _score, address in searcher.search(query, 500, count=False).hits:
            doc = searcher.doc(address)
            if doc.get_first("kind") in kinds and doc.get_first("path") in self.sources:
                out.add(doc.get_first("path"))
        return out


def crate(path: str) -> str:
    """The crate directory of a path: what precedes its ``src``/``tests``/... part."""
    parts = path.split("/")
    for i, part in enumerate(parts[:-1]):
        if part in _CRATE_DIRS:
            return "/".join(parts[:i])
    return "/".join(parts[:-1])


def _few(lists: Iterable[set[str]], most: int) -> list[str]:
    out: list[str] = []
    for files in lists:
        if 0 < len(files) <= most:
            out += sorted(f for f in files if f not in out)
    return out


def qualified(tree: Tree, text: str, s: Signals) -> list[str]:
    pairs = list(dict.fromkeys(_QUALIFIED.findall(text)))[:20]
    return _few((tree.defined(rf"(.*::)?{t}::{m}", {"fn"}) for t, m in pairs), 3)


def types(tree: Tree, text: str, s: Signals) -> list[str]:
    names = list(dict.fromkeys(_TICKED_TYPE.findall(text)))[:20]
    kinds = {"struct", "enum", "trait"}
    return _few((tree.defined(rf"(.*::)?{n}", kinds) for n in names), 3)


def ticked_fns(tree: Tree, text: str, s: Signals) -> list[str]:
    names = list(dict.fromkeys(_TICKED_FN.findall(text)))[:20]
    return _few((tree.defined(rf"(.*::)?{n}", {"fn"}) for n in names), 2)


def stems(tree: Tree, text: str, s: Signals) -> list[str]:
    by_stem: dict[str, set[str]] = defaultdict(set)
    for path in tree.sources:
        parts = path.split("/")
        stem = parts[-2] if parts[-1] in _ROOTS and len(parts) > 1 else parts[-1][:-3]
        by_stem[stem].add(path)
    snake = [re.sub(r"(?<!^)(?=[A-Z])", "_", n).lower() for n in _CAMEL.findall(text)]
    names = dict.fromkeys([*snake, *_SNAKE.findall(text)])
    return _few((by_stem.get(n, set()) for n in names), 2)


def rare_names(tree: Tree, text: str, s: Signals) -> list[str]:
    names = [
        n
        for n in code_names(extract_mentions(text))
        if len(n) >= 4 and ("_" in n or any(c.isupper() for c in n[1:]))
    ][:40]
    found = []
    for name in names:
        word = re.compile(rf"\b{re.escape(name)}\b")
        found.append({p for p, body in tree.sources.items() if word.search(body)})
    return _few(found, 3)


def test_to_source(tree: Tree, text: str, s: Signals) -> list[str]:
    by_name: dict[str, set[str]] = defaultdict(set)
    for path in tree.sources:
        by_name[path.rsplit("/", 1)[-1]].add(path)
    first = [*s.rg_files[:10], *(h.path for h in s.hits.files[:10])]
    first += [u.path for u in s.hits.units[:10]]
    tests = [p for p in dict.fromkeys(first) if path_role(p) == "test"]
    names = [p.rsplit("/", 1)[-1] for p in tests if p.rsplit("/", 1)[-1] not in _ROOTS]
    return _few((by_name.get(n, set()) for n in names), 2)


CANDIDATES: dict[str, Callable[[Tree, str, Signals], list[str]]] = {
    f.__name__: f for f in (qualified, types, ticked_fns, stems, rare_names, test_to_source)
}


def votes(s: Signals, prior: bool = True) -> list[FileVote]:
    """The fused order a search gives (``prior``: with the file prior, else without)."""
    fusion = fusion_for(s.rg_files, s.hits)
    if not prior:
        fusion = msgspec.structs.replace(fusion, size_exponent=0.0, unit_votes=0.0)
    ix = index_file_order(s.hits, fusion)
    tests = s.focus == "tests"
    return fused_files(s.rg_files, ix, fusion, s.hits, tests_wanted=tests, sizes=s.sizes)


def candidate_lists(sigs: list[Signals], rows: dict[str, dict], trees: Path) -> None:
    print("| list | texts | files | gold | precision | gold outside fused top 5 |")
    print("|---|---|---|---|---|---|")
    counts = {name: [0, 0, 0, 0] for name in CANDIDATES}
    for s in sigs:
        tree = Tree(trees / s.id)
        text = _loc.query_text(rows[s.id], s.text)
        top5 = orders(s, None)["fused"][0][:5]
        for name, find in CANDIDATES.items():
            files = find(tree, text, s)
            if files:
                gold = [f for f in files if f in s.gold]
                c = counts[name]
                c[0], c[1], c[2] = c[0] + 1, c[1] + len(files), c[2] + len(gold)
                c[3] += sum(f not in top5 for f in gold)
    for name, (texts, files, gold, outside) in counts.items():
        prec = 100 * gold / max(1, files)
        print(f"| {name} | {texts} | {files} | {gold} | {prec:.0f}% | {outside} |")


def _top_crate(first: list[FileVote]) -> str:
    mass: dict[str, float] = defaultdict(float)
    for v in first:
        mass[crate(v.file)] += v.fused
    return max(mass, key=lambda c: (mass[c], c)) if mass else ""


def gold_rates(groups: dict[str, list[Signals]]) -> None:
    print("\n| feature (fused first 10) | " + " | ".join(groups) + " |")
    print("|---|" + "---|" * len(groups))
    rates: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for name, sigs in groups.items():
        for s in sigs:
            first = votes(s, prior=False)[:10]
            top = _top_crate(first)
            units: dict[str, int] = defaultdict(int)
            for u in s.hits.units:
                units[u.path] += 1
            for i, v in enumerate(first, 1):
                size = s.sizes.get(v.file, 0)
                features = {
                    "ranks 1-5": i <= 5,
                    "ranks 6-10": i > 5,
                    "under 10 kB": size < 10_000,
                    "10-50 kB": 10_000 <= size < 50_000,
                    "50 kB and more": size >= 50_000,
                    "in the first 10's main crate": crate(v.file) == top,
                    "in another crate": crate(v.file) != top,
                    ">= 3 of the index's units": units[v.file] >= 3,
                    "no unit among the index's": units[v.file] == 0,
                    "found by rg only": not v.rank_index and not v.rank_named,
                    "found by the index only": not v.rank_rg,
                }
                for feature, holds in features.items():
                    if holds:
                        r = rates[feature][name]
                        r[0], r[1] = r[0] + (v.file in s.gold), r[1] + 1
    for feature, per_set in rates.items():
        cells = [f"{100 * g / max(1, n):.1f}% of {n}" for g, n in per_set.values()]
        print(f"| {feature} | " + " | ".join(cells) + " |")


def rescored(s: Signals, c: float) -> list[str]:
    """The fused order with a file outside the first 10's main crate scoring ``c`` times."""
    order = votes(s)
    if c == 1:
        return [v.file for v in order]
    top = _top_crate(order[:10])
    score = {v.file: v.fused * (c if crate(v.file) != top else 1.0) for v in order}
    rank = {v.file: i for i, v in enumerate(order)}
    return sorted(score, key=lambda f: (-score[f], rank[f]))


def crate_grid(groups: dict[str, list[Signals]]) -> None:
    grid = [1.0, 0.85, 0.7, 0.5, 0.3]
    right: dict[tuple[float, str, str], tuple[bool, bool, bool]] = {}
    for setting, (name, sigs) in itertools.product(grid, groups.items()):
        for s in sigs:
            files = rescored(s, setting)
            right[(setting, name, s.id)] = tuple(  # type: ignore[assignment]
                bool(s.gold) and all(g in files[:k] for g in s.gold) for k in (1, 5, 10)
            )
    print("\n| c | " + " | ".join(f"{n} Acc@1/5/10" for n in groups) + " |")
    print("|---|" + "---|" * len(groups))
    for setting in grid:
        cells = []
        for name, sigs in groups.items():
            got = [right[(setting, name, s.id)] for s in sigs]
            rates = (100 * sum(g[k] for g in got) / len(got) for k in range(3))
            cells.append("/".join(f"{r:.1f}" for r in rates))
        print(f"| {setting} | " + " | ".join(cells) + " |")
    repos = sorted({s.repo for sigs in groups.values() for s in sigs})
    for k, label in ((1, "Acc@5"), (2, "Acc@10")):

        def mean(setting: float, left_out: str, k: int = k) -> float:
            rates = []
            for name, sigs in groups.items():
                got = [right[(setting, name, s.id)][k] for s in sigs if s.repo != left_out]
                rates.append(sum(got) / max(1, len(got)))
            return sum(rates) / len(rates)

        held: dict[str, list[bool]] = defaultdict(list)
        chosen: dict[float, int] = defaultdict(int)
        for repo in repos:
            best = max(grid, key=lambda g, r=repo: (mean(g, r), g == grid[0]))
            chosen[best] += 1
            for name, sigs in groups.items():
                held[name] += [right[(best, name, s.id)][k] for s in sigs if s.repo == repo]
        rates = ", ".join(f"{n} {100 * sum(h) / len(h):.1f}" for n, h in held.items())
        print(f"\nleave-one-repository-out by {label}: held-out {rates}; chosen {dict(chosen)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="../shared/eval/rust_tuning.jsonl")
    _common.dir_argument(
        ap,
        "--trees",
        _common.EVAL_TREES,
        "the trees at the issues' base commits, DIR/<instance_id> (bench/prepare_eval_trees.py)",
    )
    ap.add_argument("--signals", action="append", required=True, help="index_fusion.py signals")
    args = ap.parse_args()
    rows = {r["instance_id"]: r for r in _loc.load_rows(args.data)}
    trees = Path(args.trees).resolve()
    groups: dict[str, list[Signals]] = {}
    for path in args.signals:
        sigs = [msgspec.json.decode(ln, type=Signals) for ln in Path(path).read_text().splitlines()]
        groups[f"{sigs[0].set}/{sigs[0].text}"] = sigs
    for name, sigs in groups.items():
        print(f"\n{name}: candidate lists\n")
        candidate_lists(sigs, rows, trees)
    gold_rates(groups)
    crate_grid(groups)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
