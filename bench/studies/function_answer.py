"""Replay saved reports through the Relevant Functions rerank (``cq/index/functions.py``).

``bench.localization --raw-dir DIR`` keeps every report; this reads them back with the issue
rows, rebuilds the rerank's inputs exactly as a search does (the candidates: the report's
Relevant Functions with their fused scores; rg's findings by containing scope; the words the
index was asked, ``asked_words`` of the text and the rewriter's terms), and scores function
Hit@1 (the Answer, which leads with the first Relevant Function) and Hit@5 for the order as
saved and as reranked with ``SignalWeights`` (or a grid of them, ``--grid``, with a
leave-one-repository-out check: each repository scored with the weights best on the others).

    python -m bench.studies.function_answer --data ../shared/eval/python_tuning.jsonl \
        --raw /tmp/fn-raw-base/py100 --text full,title --grid
"""

from __future__ import annotations

import argparse
import functools
import gzip
import json
import math
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import msgspec

from bench import _common, _loc
from bench.studies.index_fusion import units_by_name
from cq.index.coverage import words_of
from cq.index.functions import (
    WEIGHTS,
    Asked,
    Candidate,
    Hit,
    Scored,
    asked,
    best_answer,
    measured,
    ordered,
)
from cq.index.query import asked_words
from cq.index.scopes import rg_scope_key
from cq.index.units import Unit
from cq.model.index_tuning import IndexTuning, SignalWeights
from cq.rewrite import stem, understand
from cq.rewrite.words import subwords


class Case:
    """One saved report: its inputs to the rerank and the issue's gold functions."""

    def __init__(self, row: dict, data: dict, text: str, trees: Path, pool: int) -> None:
        self.id, self.repo, self.gold = row["instance_id"], row["repo"], row["gold_functions"]
        section = next((s for s in data["sections"] if s["type"] == "functions"), None)
        self.candidates = [
            Candidate(file=f["file"], qualname=_qualname(f["name"], f["file"]), fused=_fused(f))
            for f in (section["functions"] if section else [])[:pool]
        ]
        self.hits = [
            Hit(
                file=f["file"],
                scope=rg_scope_key(f["file"], f["containing_scope"]),
                category=f["category"],
                text=f["text"],
            )
            for f in data["findings"]
            if f.get("containing_scope") and f.get("tier") != "index"
        ]
        rw = data["summary"].get("rewrite") or {}
        query = _loc.query_text(row, text)
        terms = tuple(rw.get("identifiers") or ()) + tuple(rw.get("literals") or ())
        read = understand(query)
        self.question: Asked = asked(read, asked_words(read, terms, IndexTuning()))
        self.answer = _loc.report_answer(data)
        files = list(dict.fromkeys(f["file"] for f in data["findings"]))
        held = [_words(trees / self.id, c) for c in self.candidates]
        sizes = [_lines(trees / self.id, c) for c in self.candidates]
        self.measured = measured(self.candidates, self.question, self.hits, files, held, sizes)
        self.names = [f"{c.file}::{c.qualname}" for c in self.candidates]
        self.gold_at = {
            i for i, name in enumerate(self.names) if _loc.function_hit([name], self.gold)
        }

    def order(self, weights: SignalWeights | None, first: int = 10) -> list[int]:
        """The candidates' indexes in the report's order (the first ``first`` fused ones:
        what the report lists) or reranked (all of them: the rerank's pool), the Answer's
        candidate first (the report's Answer, then its list)."""
        if weights is None:
            return list(range(min(first, len(self.candidates))))
        listed = ordered(self.measured, weights)
        first_one = best_answer(listed)
        return [s.at for s in ([first_one] if first_one else [])] + [
            s.at for s in listed if s is not first_one
        ]

    def score(self, weights: SignalWeights | None) -> tuple[bool, bool]:
        at = self.order(weights)
        return (bool(at) and at[0] in self.gold_at, any(i in self.gold_at for i in at[:5]))


def _fused(f: dict) -> float:
    """A listed function's fused score: its ``scores`` keep it (relative to the pool's best)
    since the list shows the reranked score; older reports' ``score`` was the fused one."""
    return f["scores"]["fused"] if "scores" in f else f["score"]


@functools.lru_cache(maxsize=8192)
def _units(tree: Path, path: str) -> dict[str, Unit]:
    return units_by_name(tree, path)


def _words(tree: Path, c: Candidate) -> frozenset[str] | None:
    u = _units(tree, c.file).get(c.qualname)
    return words_of(u) if u is not None else None


def _lines(tree: Path, c: Candidate) -> int:
    u = _units(tree, c.file).get(c.qualname)
    return len(u.text.splitlines()) if u is not None else 0


def _qualname(name: str, file: str) -> str:
    return name[len(file) + 2 :] if name.startswith(file + "::") else name


def load(data: str, raw: str, text: str, trees: Path, pool: int = 0) -> list[Case]:
    """The saved reports of ``data``'s issues with a gold function; ``pool``: the first
    fused units reranked (0: ``IndexTuning.function_pool``, as a search does)."""
    pool = pool or IndexTuning().function_pool
    cases = []
    for row in _loc.load_rows(data):
        path = Path(raw) / f"{row['instance_id']}.{text}.json.gz"
        if row.get("gold_functions") and path.is_file():
            data_ = json.loads(gzip.decompress(path.read_bytes()))
            cases.append(Case(row, data_, text, trees, pool))
    return cases


def figures(cases: list[Case], weights: SignalWeights | None) -> tuple[float, float]:
    got = [c.score(weights) for c in cases]
    n = len(got) or 1
    return 100 * sum(a for a, _ in got) / n, 100 * sum(b for _, b in got) / n


GRID = {
    "frame": (0.0, 0.5, 1.0, 2.0),
    "written": (0.0, 0.1, 0.2, 0.4, 0.8),
    "inside": (0.0, 0.1, 0.2, 0.4),
    "owner": (0.0, 0.1, 0.2, 0.4),
    "test": (0.0, -0.1, -0.3, -1.0),
    "file": (0.0, 0.1, 0.2, 0.4, 0.8),
    "covers": (0.0, 0.2, 0.4, 0.8, 1.6),
    "size": (0.0, 0.4, 0.8, 1.0, 1.6),
}


def tune(cases: list[Case], start: SignalWeights = WEIGHTS, passes: int = 3) -> SignalWeights:
    """Coordinate ascent over ``GRID``: each weight in turn set to its best value with the
    others held, ``passes`` times (a full grid of 6 weights is too slow to replay)."""
    best, best_value = start, objective(cases, start)
    for _ in range(passes):
        for key, values in GRID.items():
            for v in values:
                trial = msgspec.structs.replace(best, **{key: v})
                value = objective(cases, trial)
                if value > best_value:
                    best, best_value = trial, value
    return best


def objective(cases: list[Case], weights: SignalWeights) -> float:
    """Hit@1 plus Hit@5, the two figures the rerank is for, equally."""
    one, five = figures(cases, weights)
    return one + five


def _name_parts(c: Case, at: int) -> frozenset[str]:
    name = c.candidates[at].qualname.replace("::", ".").rsplit(".", 1)[-1]
    return frozenset(stem(p) for p in subwords(name) if len(p) > 1 and not p.isdigit())


def _named_all(c: Case, at: int) -> float:
    """1 when every word of the function's name is asked ("buckets created": create_bucket)."""
    parts = _name_parts(c, at)
    return float(bool(parts) and parts <= c.question.stems.keys())


def _named_share(c: Case, at: int) -> float:
    parts = _name_parts(c, at)
    return len(parts & c.question.stems.keys()) / len(parts) if parts else 0.0


def _named_rare(c: Case, at: int) -> float:
    """The asked share of the name's words, each weighted by how few of the pool's names
    hold it (a word every candidate's name says tells nothing)."""
    names = [_name_parts(c, i) for i in range(len(c.candidates))]
    n = len(names)
    idf = {w: math.log((n + 1) / (sum(w in p for p in names) + 0.5)) for w in names[at]}
    total = sum(idf.values())
    return sum(v for w, v in idf.items() if w in c.question.stems) / total if total else 0.0


def _defined(c: Case, at: int) -> float:
    """1 when rg found the function's own definition by its name."""
    cand = c.candidates[at]
    name = cand.qualname.replace("::", ".").rsplit(".", 1)[-1]
    return float(
        any(
            h.category == "definition"
            and (h.file, h.scope, h.text) == (cand.file, cand.qualname, name)
            for h in c.hits
        )
    )


def _private(c: Case, at: int) -> float:
    name = c.candidates[at].qualname.replace("::", ".").rsplit(".", 1)[-1]
    return float(name.startswith("_") and not name.startswith("__"))


# Candidate signals for short questions (issue titles), each added to the shipped score of a
# one-line question's candidates at the weights of ``--probe`` (the results note has them).
PROBES: dict[str, Callable[[Case, int], float]] = {
    "named-all": _named_all,
    "named-share": _named_share,
    "named-rare": _named_rare,
    "defined": _defined,
    "private": _private,
}


def probe(
    sets: dict[str, list[Case]], weights: tuple[float, ...] = (-0.2, -0.1, 0.1, 0.2, 0.4)
) -> None:
    """Hit@1 / Hit@5 of each set with one probe signal added, and with the rerank's pool cut
    to its first 10/20/30/40 (the pool: ``--pool``, at most what the reports list)."""
    print("\n| probe | weight | " + " | ".join(sets) + " |")
    print("|---|---|" + "---|" * len(sets))
    for pool in (10, 20, 30, 40):
        row = [_probed(cases, None, 0.0, pool) for cases in sets.values()]
        print(f"| pool | {pool} | " + " | ".join(row) + " |")
    for name, signal in PROBES.items():
        for w in weights:
            row = [_probed(cases, signal, w, None) for cases in sets.values()]
            print(f"| {name} | {w} | " + " | ".join(row) + " |")


def _probed(
    cases: list[Case], signal: Callable[[Case, int], float] | None, w: float, pool: int | None
) -> str:
    one = five = 0
    for c in cases:
        scored: list[Scored] = []
        for s in c.measured[:pool]:
            extra = w * signal(c, s.at) if signal is not None and c.question.one_line else 0.0
            signals = {**s.signals, "fused": s.signals["fused"] + extra}
            scored.append(msgspec.structs.replace(s, signals=signals))
        listed = ordered(scored, WEIGHTS)
        first = best_answer(listed)
        at = [s.at for s in ([first] if first else [])] + [s.at for s in listed if s is not first]
        one += bool(at) and at[0] in c.gold_at
        five += any(i in c.gold_at for i in at[:5])
    n = len(cases) or 1
    return f"{100 * one / n:.1f} / {100 * five / n:.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", action="append", required=True)
    ap.add_argument("--raw", action="append", required=True, help="one per --data")
    ap.add_argument("--text", default="full,title")
    ap.add_argument("--grid", action="store_true")
    _common.dir_argument(
        ap,
        "--trees",
        _common.EVAL_TREES,
        "the trees at the issues' base commits, DIR/<instance_id> (bench/prepare_eval_trees.py)",
    )
    ap.add_argument("--pool", type=int, default=0, help="fused units reranked (0: as cq)")
    ap.add_argument("--probe", action="store_true", help="score the signals of PROBES")
    args = ap.parse_args()
    sets: dict[str, list[Case]] = {}
    for data, raw in zip(args.data, args.raw, strict=True):
        for text in args.text.split(","):
            sets[f"{Path(data).stem}/{text}"] = load(
                data, raw, text, Path(args.trees), pool=args.pool
            )
    print("| set | n | saved Answer | saved fn Hit@1 / Hit@5 | reranked Hit@1 / Hit@5 | any |")
    print("|---|---|---|---|---|---|")
    for key, cases in sets.items():
        saved = 100 * sum(_loc.function_hit([c.answer], c.gold) for c in cases) / (len(cases) or 1)
        b1, b5 = figures(cases, None)
        r1, r5 = figures(cases, WEIGHTS)
        pool = 100 * sum(bool(c.gold_at) for c in cases) / (len(cases) or 1)
        print(
            f"| {key} | {len(cases)} | {saved:.1f} | {b1:.1f} / {b5:.1f} | {r1:.1f} / {r5:.1f} "
            f"| {pool:.1f} |"
        )
    by_repo: dict[str, list[Case]] = defaultdict(list)
    for cases in sets.values():
        for c in cases:
            by_repo[c.repo].append(c)
    print("\n| repo | n | saved Hit@1 / Hit@5 | reranked Hit@1 / Hit@5 |\n|---|---|---|---|")
    for repo, cases in sorted(by_repo.items()):
        b1, b5 = figures(cases, None)
        r1, r5 = figures(cases, WEIGHTS)
        print(f"| {repo} | {len(cases)} | {b1:.1f} / {b5:.1f} | {r1:.1f} / {r5:.1f} |")
    if args.probe:
        probe(sets)
    if args.grid:
        every = [c for cases in sets.values() for c in cases]
        best = tune(every)
        print(f"\nbest on all: {best} -> {figures(every, best)}")
        for key, cases in sets.items():
            one, five = figures(cases, best)
            print(f"  {key}: {one:.1f} / {five:.1f}")
        print("\nleave one repository out (weights best on the others):")
        held_total = [0.0, 0.0, 0]
        for repo, cases in sorted(by_repo.items()):
            rest = [c for c in every if c.repo != repo]
            chosen = tune(rest)
            one, five = figures(cases, chosen)
            held_total[0] += one * len(cases) / 100
            held_total[1] += five * len(cases) / 100
            held_total[2] += len(cases)
            print(f"  {repo}: {one:.1f} / {five:.1f} with {chosen}")
        n = held_total[2] or 1
        print(f"  pooled held-out: {100 * held_total[0] / n:.1f} / {100 * held_total[1] / n:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
