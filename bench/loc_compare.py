"""Compare localization runs issue by issue, or fuse two runs' file orders.

Reads the ``--json-out`` files of ``localization.py`` and ``bm25_baseline.py``:

- ``table A.json ...``: the per-repository and pooled tables of every run in the files.
- ``summary A.json ...``: one pooled row per run (and per run without flagged issues), with
  the number of issues the run returned no file for, and each run's Acc@5 by the number of
  files its issues' fixes touched.
- ``diff A.json B.json``: for each pair of runs with the same query text (``full``/``title``;
  ``--a-run``/``--b-run`` pick others by ``mode/text`` key), which issues got better or worse
  (the k from which all gold files are in the top k: the worst gold rank), Acc@5 gained/lost.
- ``fuse A.json B.json``: reciprocal-rank fusion, score(file) = sum over the two orders of
  1 / (k + rank) with k = 5 (issue 14's untuned fusion), ties to A's order; printed as a
  third run (``--json-out`` writes it), plus the oracle "either top 5 has every gold file".
  The inputs keep only each run's first ``--keep-files`` files (default 20), so a gold file
  beyond them in both runs is counted as not ranked: exact for Acc@10 in all but contrived
  cases, since two rank-20 votes (2/25) lose to any rank-5 vote (1/10).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench import _loc
from cq.index.dense import rrf


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    tab = sub.add_parser("table", help="print every run's tables")
    tab.add_argument("files", nargs="+")
    summ = sub.add_parser("summary", help="one pooled row per run")
    summ.add_argument("files", nargs="+")
    for name in ("diff", "fuse"):
        p = sub.add_parser(name)
        p.add_argument("a")
        p.add_argument("b")
        p.add_argument("--a-run", help="mode/text key of the run in A (default: pair by text)")
        p.add_argument("--b-run", help="mode/text key of the run in B")
    sub.choices["fuse"].add_argument("--k", type=int, default=5)
    sub.choices["fuse"].add_argument("--json-out")
    sub.choices["diff"].add_argument("--all", action="store_true", help="list unchanged too")
    args = ap.parse_args()
    if args.command == "table":
        for path in args.files:
            for run in _loc.read(path):
                print(_loc.table(run) + "\n")
        return 0
    if args.command == "summary":
        print(summary([run for path in args.files for run in _loc.read(path)]))
        return 0
    pairs = pair_runs(_loc.read(args.a), _loc.read(args.b), args.a_run, args.b_run)
    if not pairs:
        print("loc_compare: no runs to pair (see --a-run/--b-run)", file=sys.stderr)
        return 2
    fused = []
    for a, b in pairs:
        if args.command == "diff":
            print(diff(a, b, args.all) + "\n")
        else:
            run = fuse(a, b, args.k)
            fused.append(run)
            print(_loc.table(run))
            print(f"\noracle, either top 5 has every gold file: {oracle(a, b, 5)}\n")
    if args.command == "fuse" and args.json_out:
        _loc.write(args.json_out, fused)
    return 0


def summary(runs: list[_loc.Run]) -> str:
    head = ["run", "set", "n", *[f"Acc@{k}" for k in _loc.KS], "Hit@5", "fn Hit@5 (n)"]
    head.append("no file")  # issues the tool returned no file for: recall, not order
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for run in runs:
        groups = [("", run.instances)]
        clean = [i for i in run.instances if not i.flagged]
        if len(clean) < len(run.instances):
            groups.append((f" without {_loc.FLAG}", clean))
        for suffix, group in groups:
            row = _loc.metric_row(f"{run.tool} {run.key}", group, True, False).split(" | ")
            data = Path(run.data).stem.replace("_tuning", "").replace("swebench_", "")
            hit5 = row[2 + len(_loc.KS) + _loc.KS.index(5)]
            row = [*row[: 2 + len(_loc.KS)], hit5, row[-1].rstrip(" |")]
            row.append(f"{sum(not i.files for i in group)} |")
            row.insert(1, data + suffix)
            lines.append(" | ".join(row))
    lines.append("")
    lines += [
        f"{run.tool} {run.key} {run.data}: {_loc.by_gold_count(run.instances)}" for run in runs
    ]
    return "\n".join(lines)


def pair_runs(
    runs_a: list[_loc.Run], runs_b: list[_loc.Run], key_a: str | None, key_b: str | None
) -> list[tuple[_loc.Run, _loc.Run]]:
    if key_a or key_b:
        a = [r for r in runs_a if key_a in (None, r.key)]
        b = [r for r in runs_b if key_b in (None, r.key)]
        return [(a[0], b[0])] if a and b else []
    return [(a, b) for a in runs_a for b in runs_b if a.text == b.text]


def common(a: _loc.Run, b: _loc.Run) -> list[tuple[_loc.Instance, _loc.Instance]]:
    by_id = {i.id: i for i in b.instances}
    return [(i, by_id[i.id]) for i in a.instances if i.id in by_id]


def diff(a: _loc.Run, b: _loc.Run, show_all: bool) -> str:
    pairs = common(a, b)
    lines = [f"### {a.tool} {a.key} -> {b.tool} {b.key}: {len(pairs)} common issues", ""]
    better = [(x, y) for x, y in pairs if _loc.worst_rank(y) < _loc.worst_rank(x)]
    worse = [(x, y) for x, y in pairs if _loc.worst_rank(y) > _loc.worst_rank(x)]
    for k in _loc.KS:
        gained = sum(_loc.acc(y, k) and not _loc.acc(x, k) for x, y in pairs)
        lost = sum(_loc.acc(x, k) and not _loc.acc(y, k) for x, y in pairs)
        was = sum(_loc.acc(x, k) for x, _ in pairs)
        now = sum(_loc.acc(y, k) for _, y in pairs)
        lines.append(f"Acc@{k}: {was} -> {now} (+{gained} -{lost})")
    lines.append(f"\nbetter worst-gold rank: {len(better)}, worse: {len(worse)}")
    shown = [("better", better), ("worse", worse)]
    if show_all:
        shown.append(("same", [p for p in pairs if p not in better and p not in worse]))
    for label, group in shown:
        for x, y in group:
            mark = " Acc@5" if _loc.acc(x, 5) != _loc.acc(y, 5) else ""
            lines.append(f"  {label:6} {x.id:48} {x.ranks} -> {y.ranks}{mark}")
    return "\n".join(lines)


def fuse(a: _loc.Run, b: _loc.Run, k: int) -> _loc.Run:
    out = []
    for x, y in common(a, b):
        order = rrf(x.files, y.files, 1.0, k)  # both runs weigh alike
        out.append(
            _loc.Instance(
                id=x.id,
                repo=x.repo,
                gold=x.gold,
                ranks=_loc.ranks_of(x.gold, order),
                files=order[: max(len(x.files), len(y.files))],
                flagged=x.flagged,
                note=f"{a.tool}+{b.tool}",
            )
        )
    options = [f"--k={k}", f"a={a.tool} {a.key}", f"b={b.tool} {b.key}"]
    return _loc.Run("rrf", f"rrf(k={k})", a.text, a.data, options, out)


def oracle(a: _loc.Run, b: _loc.Run, k: int) -> str:
    pairs = common(a, b)
    either = sum(
        bool(x.gold) and all(f in x.files[:k] or f in y.files[:k] for f in x.gold) for x, y in pairs
    )
    return f"{either}/{len(pairs)} = {100 * either / len(pairs):.1f}%" if pairs else "-"


if __name__ == "__main__":
    raise SystemExit(main())
