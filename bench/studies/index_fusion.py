"""Tune and check the index fusion offline: gather both signals once, score many fusions.

Gather (``--gather``): for every issue, one ``cq search - --no-index --format json`` over its
tree gives rg's file order, its scopes and the rewriter's terms; in-process, the repository
index of the tree (``cq.index``, in CQ_CACHE_DIR) answers the same text and terms. Both land
in ``--signals FILE`` (JSON lines). Score (always): file Acc@k and function Hit@5 for rg alone,
the index alone, and the fusion of ``cq/index/fuse.py`` with its defaults (``Tuning.index``,
``cq/model/index_tuning.py``) and a grid of alternatives (``--grid``), per set and
repository, exactly as a search fuses them.

    python -m bench.studies.index_fusion --data ../shared/eval/python_tuning.jsonl --sample 100 \
        --text full --signals /tmp/sig-py.jsonl --gather --jobs 2
    python -m bench.studies.index_fusion --signals /tmp/sig-py.jsonl \
        --signals /tmp/sig-rs.jsonl --grid
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import subprocess
import sys
import threading
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import msgspec

from bench import _common, _loc
from cq.index.build import update_index
from cq.index.coverage import UnitReader
from cq.index.fuse import fused_files, fusion_for, index_file_order
from cq.index.order import fused_order, sizes_of
from cq.index.query import IndexHits, ask, asked_words
from cq.index.scopes import rg_scope_key
from cq.index.units import Unit, file_units
from cq.model.index_tuning import PYTHON_FUSION, Fusion, IndexTuning
from cq.model.language import language_of
from cq.model.ranking import DEFAULT_ROLE_MULTIPLIERS
from cq.rewrite import understand

_lock = threading.Lock()


def units_by_name(tree: Path, path: str) -> dict[str, Unit]:
    """The index's units of ``tree/path`` by qualified name (the first of a name); none when
    the file cannot be read."""
    try:
        text = (tree / path).read_text(errors="replace")
    except OSError:
        return {}
    found: dict[str, Unit] = {}
    for u in file_units(text, language_of(path) or "python"):
        found.setdefault(u.qualname, u)
    return found


class Signals(msgspec.Struct):
    id: str
    repo: str
    set: str
    text: str
    gold: list[str]
    gold_functions: list[str]
    flagged: bool
    rg_files: list[str]
    rg_scopes: list[tuple[str, str]]
    hits: IndexHits
    terms: tuple[str, ...] = ()
    focus: str = ""  # the search's focus (older signal files: unknown, not "tests")
    sizes: dict[str, int] = {}  # bytes of rg's and the index's files (the index's manifest)


def gather(row: dict, args: argparse.Namespace, text: str) -> Signals | None:
    tree = Path(args.trees).resolve() / row["instance_id"]
    if not tree.is_dir():
        return None
    query = _loc.query_text(row, text)
    argv = [sys.executable, "-m", "cq", "search", "-", "--format", "json", "--no-index"]
    argv += ["--limit", "500", "--root", str(tree)]
    proc = subprocess.run(argv, input=query.encode(), capture_output=True, check=False)
    files: list[str] = []
    scopes: list[tuple[str, str]] = []
    terms: tuple[str, ...] = ()
    focus = ""
    if proc.stdout:
        data = json.loads(proc.stdout)
        focus = data["summary"].get("focus") or ""
        rw = data["summary"].get("rewrite") or {}
        if rw.get("applied"):
            terms = tuple(rw.get("identifiers", [])) + tuple(rw.get("literals", []))
        for f in data["findings"]:
            files.append(f["file"]) if f["file"] not in files else None
            if f.get("containing_scope"):
                scopes.append((f["file"], rg_scope_key(f["file"], f["containing_scope"])))
    with _lock:  # one writer per index: trees are distinct, but keep the load down
        opened, _ = update_index(tree)
    hits = ask(opened.index, opened.manifest, understand(query), terms)
    return Signals(
        id=row["instance_id"],
        repo=row["repo"],
        set=Path(args.data).name,
        text=text,
        gold=_loc.gold_files(row, tree),
        gold_functions=row.get("gold_functions") or [],
        flagged=bool(row.get(_loc.FLAG)),
        rg_files=files[:100],
        rg_scopes=list(dict.fromkeys(scopes))[:100],
        hits=hits,
        terms=terms,
        focus=focus,
        sizes=sizes_of(opened.manifest, files[:100], hits),
    )


def requery(s: Signals, rows: dict[str, dict], trees: str) -> Signals:
    """The same issue's index hits from the current cq.index code (rg's side is kept)."""
    tree = Path(trees).resolve() / s.id
    query = _loc.query_text(rows[s.id], s.text)
    terms = s.terms or _terms(query, tree)
    opened, _ = update_index(tree)
    hits = ask(opened.index, opened.manifest, understand(query), terms)
    sizes = sizes_of(opened.manifest, s.rg_files, hits)
    return msgspec.structs.replace(s, hits=hits, terms=terms, sizes=sizes)


def _terms(query: str, tree: Path) -> tuple[str, ...]:
    """The offline rewriter's terms, as a search would use them (older signal files)."""
    from cq.model import Scope
    from cq.model.tuning import RewriteTuning
    from cq.rewrite.run import rewrite_query

    question = understand(query, rewrite=True)
    summary = rewrite_query(question, Scope(root=str(tree)), "forced", RewriteTuning()).summary
    return summary.identifiers + summary.literals


class Reread:
    """What a search reads to reorder its first files and Relevant Functions
    (``cq/index/coverage.py``): each issue's tree for the units' text, its text for the words
    the index was asked."""

    def __init__(self, trees: Path, eval_dir: Path) -> None:
        self.trees, self.eval_dir = trees, eval_dir
        self.rows: dict[str, dict] = {}

    def words(self, s: Signals) -> dict[str, float]:
        if s.id not in self.rows:
            for row in _loc.load_rows(str(self.eval_dir / s.set)):
                self.rows[row["instance_id"]] = row
        query = _loc.query_text(self.rows[s.id], s.text)
        return asked_words(understand(query), tuple(s.terms), IndexTuning())

    def reader(self, s: Signals) -> UnitReader:
        return UnitReader(functools.partial(self._units, s.id))

    @functools.lru_cache(maxsize=4096)  # noqa: B019 (one per bench run)
    def _units(self, issue: str, path: str) -> dict[str, Unit]:
        return units_by_name(self.trees / issue, path)


REREAD: Reread | None = None  # set by main(); None: files and functions as fused (--no-reread)


def orders(s: Signals, fusion: Fusion | None) -> dict[str, tuple[list[str], list[str]]]:
    """Per method: (files, function names ``path::qualname``) in rank order; the fused
    order is ``cq.index.order.fused_order``'s, as a search makes it (``fusion``: one fusion
    for every issue instead of the one a search would choose)."""
    numbers = IndexTuning()
    if fusion is not None:
        numbers = msgspec.structs.replace(numbers, python=fusion, fusion=fusion, one_line=fusion)
    reader, words = (REREAD.reader(s), REREAD.words(s)) if REREAD is not None else (None, {})
    order = fused_order(
        s.rg_files,
        s.rg_scopes,
        s.hits,
        words,
        s.sizes,
        reader,
        numbers,
        DEFAULT_ROLE_MULTIPLIERS,
        tests_wanted=s.focus == "tests",
    )
    rg_fns = [f"{f}::{q}" for f, q in dict.fromkeys(s.rg_scopes)]
    ix_fns = [f"{u.path}::{u.qualname}" for u in s.hits.units if u.kind != "module"]
    return {
        "rg": (s.rg_files, rg_fns),
        "index": (index_file_order(s.hits, order.fusion), ix_fns),
        "fused": (
            [v.file for v in order.files],
            [f"{u.file}::{u.qualname}" for u, _ in order.units],
        ),
    }


def instances(sigs: list[Signals], fusion: Fusion | None, method: str) -> list[_loc.Instance]:
    out = []
    for s in sigs:
        files, fns = orders(s, fusion)[method]
        row = {"instance_id": s.id, "repo": s.repo, "gold_functions": s.gold_functions}
        row[_loc.FLAG] = s.flagged
        out.append(_loc.instance(row, s.gold, files, fns, 20))
    return out


def pooled(insts: list[_loc.Instance], k: int) -> float:
    return 100 * sum(_loc.acc(i, k) for i in insts) / max(1, len(insts))


def fn_hit(insts: list[_loc.Instance]) -> float:
    scored = [i for i in insts if i.fn is not None]
    return 100 * sum(bool(i.fn) for i in scored) / max(1, len(scored))


def fn_hit1(sigs: list[Signals], method: str) -> float:
    """A gold function first in the method's function list (what a question's Answer is)."""
    hits = [
        _loc.function_hit(orders(s, None)[method][1][:1], s.gold_functions)
        for s in sigs
        if s.gold_functions
    ]
    return 100 * sum(bool(h) for h in hits) / max(1, len(hits))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="../shared/eval/swebench_lite_dev_tuning.jsonl")
    _common.dir_argument(
        ap,
        "--trees",
        _common.EVAL_TREES,
        "the trees at the issues' base commits, DIR/<instance_id> (bench/prepare_eval_trees.py)",
    )
    ap.add_argument("--signals", action="append", required=True, help="JSON lines file")
    ap.add_argument("--gather", action="store_true", help="(re)compute the first --signals")
    ap.add_argument("--text", default="full", help="full or title (with --gather)")
    ap.add_argument("--sample", type=int)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument(
        "--grid",
        nargs="?",
        const="all",
        choices=("all", "files", "functions", "prior"),
        help="also score a grid of fusions (the file order's, the Relevant Functions' or "
        "both; or the file prior's numbers over each issue's own fusion), with "
        "leave-one-repository-out",
    )
    ap.add_argument(
        "--requery",
        action="append",
        default=[],
        metavar="DATA",
        help="recompute the index hits of every --signals file with the current code (DATA: "
        "the JSONL sets the issue texts come from); the files are rewritten",
    )
    ap.add_argument("--tables", action="store_true", help="per-repository tables")
    ap.add_argument(
        "--eval-dir",
        default=str(Path(__file__).resolve().parent.parent.parent / "shared" / "eval"),
        help="the sets' JSONL files (the issue texts Relevant Functions are reread for)",
    )
    ap.add_argument(
        "--no-reread",
        action="store_true",
        help="files and Relevant Functions as fused, without the reread (before session 10)",
    )
    args = ap.parse_args()
    global REREAD
    if not args.no_reread:
        REREAD = Reread(Path(args.trees).resolve(), Path(args.eval_dir))
    if args.gather:
        rows = _loc.sample(_loc.load_rows(args.data), args.sample)
        got = _loc.run_all(rows, lambda r: gather(r, args, args.text), args.jobs)
        with open(args.signals[0], "w") as out:
            for s in got:
                if s is not None:
                    out.write(msgspec.json.encode(s).decode() + "\n")
    rows = {r["instance_id"]: r for data in args.requery for r in _loc.load_rows(data)}
    groups: dict[str, list[Signals]] = defaultdict(list)
    for path in args.signals:
        sigs = [msgspec.json.decode(ln, type=Signals) for ln in Path(path).read_text().splitlines()]
        if rows:
            sigs = _loc.run_all(sigs, lambda s: requery(s, rows, args.trees), args.jobs)
            Path(path).write_text("".join(msgspec.json.encode(s).decode() + "\n" for s in sigs))
        for s in sigs:
            groups[f"{s.set}/{s.text}"].append(s)
    tables: list[str] = []
    counts: list[str] = []  # Acc@5 by the number of files a fix touched
    print("| set | n | method | Acc@1 | Acc@3 | Acc@5 | Acc@10 | fn Hit@5 | fn Hit@1 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, sigs in groups.items():
        for method in ("rg", "index", "fused"):
            insts = instances(sigs, None, method)
            cells = [f"{pooled(insts, k):.1f}" for k in _loc.KS]
            cells += [f"{fn_hit(insts):.1f}", f"{fn_hit1(sigs, method):.1f}"]
            print(f"| {name} | {len(sigs)} | {method} | {' | '.join(cells)} |")
            counts.append(f"{name} {method}: {_loc.by_gold_count(insts)}")
            if args.tables and method in ("rg", "fused"):
                label = "cq before (rg)" if method == "rg" else "cq with the index (fused)"
                tables.append(_loc.table(_loc.Run(label, method, name, name, [], insts)))
    print("\n" + "\n".join(counts))
    for table in tables:
        print("\n" + table)
    if args.grid:
        grid(groups, args.grid)
    return 0


GRID_TOP = 30  # each order's first files scored by the grid (Acc@5 needs the first few)


def grid(groups: dict[str, list[Signals]], which: str = "all") -> None:
    """File Acc@5 of every fusion of the grid, then the Relevant Functions' weights by
    function Hit@5 (around the Python fusion: Python sets), each with leave-one-repository-out."""
    if which in ("all", "files"):
        grid_files(groups)
    if which in ("all", "functions"):
        grid_functions(groups)
    if which == "prior":
        grid_prior(groups)


def grid_files(groups: dict[str, list[Signals]]) -> None:
    fusions = [
        Fusion(k=k, w_index=wi, w_units=wu, w_named=wn, w_defined=wd)
        for k, wi, wn, wd, wu in itertools.product(
            (3.0, 5.0, 10.0),
            (0.75, 1.0, 1.5),
            (0.0, 0.5, 1.0, 1.5, 2.0, 3.0),
            (0.0, 0.25, 0.5, 1.0),
            (0.0, 0.5),
        )
    ]
    loro(groups, fusions, _acc5, "file Acc@5")


def grid_functions(groups: dict[str, list[Signals]]) -> None:
    units = [
        msgspec.structs.replace(PYTHON_FUSION, fn_w_index=wi, fn_w_rg=wr, w_unit_file=wf)
        for wi, wr, wf in itertools.product(
            (0.5, 1.0, 2.0, 3.0), (0.25, 0.5, 1.0), (1.0, 2.0, 3.0, 4.0, 6.0)
        )
    ]
    loro(groups, units, _fn5, "function Hit@5")


def grid_prior(groups: dict[str, list[Signals]]) -> None:
    """The file prior's numbers (``fuse.file_prior``), each over the fusion a search would
    use for the issue (Rust's, a one-line question's, Python's)."""
    priors = [
        Fusion(size_exponent=a, unit_votes=u, unit_votes_max=m)
        for a, u, m in itertools.product((0.0, 0.1, 0.2, 0.3), (0.0, 0.025, 0.05, 0.1), (5, 10))
    ]

    def acc5(s: Signals, prior: Fusion) -> bool:
        own = fusion_for(s.rg_files, s.hits)
        fusion = msgspec.structs.replace(
            own,
            size_exponent=prior.size_exponent,
            unit_votes=prior.unit_votes,
            unit_votes_max=prior.unit_votes_max,
        )
        return _acc5(s, fusion)

    loro(groups, priors, acc5, "file Acc@5 (file prior)")


def loro(
    groups: dict[str, list[Signals]],
    fusions: list[Fusion],
    metric: Callable[[Signals, Fusion], bool | None],
    label: str,
) -> None:
    """``metric`` of every fusion, the mean over the sets (each set counts once, issues the
    metric does not score left out), best first; then leave-one-repository-out: for each
    repository the fusion best on the others, scored on it."""
    hits: dict[tuple[str, str], list[bool | None]] = {}
    for fusion in fusions:
        for name, sigs in groups.items():
            hits[(repr(fusion), name)] = [metric(s, fusion) for s in sigs]

    def rate(got: list[bool | None]) -> float | None:
        scored = [h for h in got if h is not None]
        return 100 * sum(scored) / len(scored) if scored else None

    def mean(fusion: Fusion, left_out: str = "") -> float:
        per_set = []
        for name, sigs in groups.items():
            got = zip(sigs, hits[(repr(fusion), name)], strict=True)
            r = rate([h for s, h in got if s.repo != left_out])
            if r is not None:
                per_set.append(r)
        return sum(per_set) / len(per_set)

    print(f"\n{label}:")
    for fusion in sorted(fusions, key=lambda f: -mean(f))[:15]:
        sets = " ".join(f"{rate(hits[(repr(fusion), n)]) or 0:.1f}" for n in groups)
        print(f"{label} mean {mean(fusion):.2f} [{sets}] {fusion}")
    repos = sorted({s.repo for sigs in groups.values() for s in sigs})
    right: dict[str, list[bool | None]] = defaultdict(list)
    chosen: dict[str, int] = defaultdict(int)
    for repo in repos:
        best = max(fusions, key=lambda f: mean(f, repo))
        chosen[repr(best)] += 1
        for name, sigs in groups.items():
            got = zip(sigs, hits[(repr(best), name)], strict=True)
            right[name] += [h for s, h in got if s.repo == repo]
    print(f"\nleave-one-repository-out {label}:")
    for name, got in right.items():
        scored = [h for h in got if h is not None]
        print(f"  {name}: {rate(got) or 0:.1f} ({len(scored)})")
    for fusion, n in sorted(chosen.items(), key=lambda x: -x[1]):
        print(f"  chosen by {n} of {len(repos)} folds: {fusion}")


def _fn5(s: Signals, fusion: Fusion) -> bool | None:
    """A gold function among the first 5 Relevant Functions (None: the issue has none)."""
    functions = orders(s, fusion)["fused"][1]
    return _loc.function_hit(functions[:5], s.gold_functions)


def _acc5(s: Signals, fusion: Fusion) -> bool:
    ix = index_file_order(s.hits, fusion)[:GRID_TOP]
    top = msgspec.structs.replace(
        s.hits, named=s.hits.named[:GRID_TOP], defined=s.hits.defined[:GRID_TOP]
    )
    tests = s.focus == "tests"
    votes = fused_files(s.rg_files[:GRID_TOP], ix, fusion, top, tests_wanted=tests, sizes=s.sizes)
    files = [v.file for v in votes[:5]]
    return bool(s.gold) and all(g in files for g in s.gold)


if __name__ == "__main__":
    raise SystemExit(main())
