"""One gate: every maintained check against its stored baseline, one pass/fail line each.

    python -m bench.gate                      # all checks
    python -m bench.gate --only golden --only classify
    python -m bench.gate --update             # write bench/baselines/ from this run (commit them)

Checks, each compared with ``bench/baselines/NAME.json`` (committed):

- ``golden``: cq's JSON for ``bench/golden.py``'s query set on the stdlib, cold and warm,
  clocks and cache counters removed; passes when every output is byte-identical to the
  baseline's (stored as digests; ``python -m bench.golden --out`` / ``--compare`` shows the
  difference itself).
- ``classify``: ``bench/classify_accuracy.py``'s agreement with the ``ast`` + ``tokenize``
  oracle over its 56 identifiers on the stdlib; passes when it is not lower.
- ``localization``: a fixed sample of the tuning sets (the ids in the baseline), one
  ``cq search -`` per issue text over its tree at the base commit (``--trees DIR``, made by
  ``bench/prepare_eval_trees.py``); file Hit@1/Hit@5 and function Hit@5 must not fall.
- ``everyday``: the everyday-question set (``bench/everyday.py``) over the tuning trees at
  their recorded commits (``--everyday-trees DIR``, made by ``bench.everyday --make-trees``),
  each question with its tree's index warm (``EVERYDAY_CACHE``); pooled Answer@1 and top-5
  must not fall by more than ``EVERYDAY_SLACK`` points (``bench.everyday --compare`` lists
  the questions that moved).
- ``latency``: ``bench/latency.py``'s warm searches on the stdlib, cq's CPU seconds over rg's in
  the same runs; passes within ``LATENCY_SLACK`` of the baseline's ratio (CPU time moves little
  when other work shares the machine; wall time is printed beside it).

The stdlib checks depend on the interpreter's stdlib: a baseline made on another Python
version is reported as not comparable, not as a failure. A check whose inputs are missing
(no trees, no everyday set) says "not available". Exit status: 1 when a check failed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench import _common, _everyday
from bench._common import scratch_dir

REPO = Path(__file__).resolve().parent.parent
BASELINES = REPO / "bench" / "baselines"
EVAL_DIR = REPO.parent / "shared" / "eval"  # the tuning sets beside the repository

# hand-set: the spread of the CPU ratio between repeated runs of bench.latency on a busy
# two-core machine stayed within ~15%; a regression worth a look is past a quarter.
LATENCY_SLACK = 1.25
# The everyday set runs with ``--cache warm`` (each question sees its tree's index, built once,
# and nothing else): a cold question's Answer depends on whether its first index build was
# ready within its timeout, which on a loaded machine moved the pooled figures ~3 points
# between two runs of the same code (bench/results/2026-11-29-everyday-main/README.md,
# "Noise"). hand-set: a pooled fall of more than EVERYDAY_SLACK points fails the gate, and
# the line counts the questions that moved either way.
EVERYDAY_CACHE = "warm"
EVERYDAY_SLACK = 2.0
LATENCY_QUERIES = ("register", "__init__")
LATENCY_RUNS = 5

# The localization sample: ``_loc.sample`` of each tuning set's issues whose repositories the
# stand-in trees come from (bench/cold_questions.py), 8 Python and 4 Rust. Fixed here, so the
# baseline is always measured on the same issues.
LOCALIZATION_SAMPLE = {
    "python_tuning.jsonl": (
        "pyro-ppl__pyro-issue-1730",
        "pyro-ppl__pyro-issue-1782",
        "Project-MONAI__MONAI-issue-1069",
        "pytorch__ignite-issue-541",
        "awslabs__gluonts-issue-535",
        "awslabs__gluonts-issue-642",
        "fepegar__torchio-issue-88",
        "allenai__allennlp-issue-4360",
    ),
    "rust_tuning.jsonl": (
        "chronotope__chrono-1157",
        "clap-rs__clap-2168",
        "clap-rs__clap-2771",
        "clap-rs__clap-3974",
    ),
}


@dataclass(frozen=True)
class Outcome:
    """One check's line: ``PASS``, ``FAIL``, or ``N/A`` (not measured: why)."""

    status: str
    detail: str


Measure = Callable[[argparse.Namespace], "tuple[dict, Callable[[dict], Outcome]] | Outcome"]


def _python() -> str:
    return platform.python_version()


def _baseline(name: str) -> dict | None:
    path = BASELINES / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _no_baseline(name: str) -> Outcome:
    return Outcome("N/A", f"no baseline: python -m bench.gate --only {name} --update")


def _same_python(base: dict) -> Outcome | None:
    if base.get("python") != _python():
        return Outcome(
            "N/A", f"baseline made on Python {base.get('python')}, this is {_python()}: --update"
        )
    return None


def golden(args: argparse.Namespace) -> tuple[dict, Callable[[dict], Outcome]]:
    from bench.golden import collect

    outputs = collect({"stdlib": _common.stdlib_dir()})
    digests = {
        key: hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()
        for key, value in outputs.items()
    }
    now = {"python": _python(), "digests": digests}

    def judge(base: dict) -> Outcome:
        if (other := _same_python(base)) is not None:
            return other
        old, new = base["digests"], now["digests"]
        differ = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
        same = len(old.keys() | new.keys()) - len(differ)
        if differ:
            return Outcome("FAIL", f"{same} same, {len(differ)} differ: " + "; ".join(differ))
        return Outcome("PASS", f"{same} same, 0 differ")

    return now, judge


def classify(args: argparse.Namespace) -> tuple[dict, Callable[[dict], Outcome]]:
    from bench.classify_accuracy import SAMPLE, compare

    agree, total = compare(Path(_common.stdlib_dir()).resolve(), list(SAMPLE), []).agreement()
    now = {"python": _python(), "agree": agree, "total": total}

    def judge(base: dict) -> Outcome:
        if (other := _same_python(base)) is not None:
            return other
        pct, old = 100 * agree / total, 100 * base["agree"] / base["total"]
        detail = f"agreement {pct:.2f}% ({agree}/{total}), baseline {old:.2f}%"
        return Outcome("PASS" if pct >= old else "FAIL", detail)

    return now, judge


def localization(args: argparse.Namespace) -> tuple[dict, Callable[[dict], Outcome]] | Outcome:
    from bench import _loc

    if not args.trees:
        return Outcome("N/A", f"no trees: --trees DIR or ${_common.EVAL_TREES}")
    wanted = [i for ids in LOCALIZATION_SAMPLE.values() for i in ids]
    missing = [i for i in wanted if not (Path(args.trees) / i).is_dir()]
    if missing:
        return Outcome("N/A", f"{len(missing)} of {len(wanted)} trees missing under {args.trees}")
    instances = []
    with scratch_dir() as tmp:
        for data, ids in LOCALIZATION_SAMPLE.items():
            out = Path(tmp) / f"{data}.json"
            argv = [sys.executable, "-m", "bench.localization", "--data", str(args.eval / data)]
            argv += ["--trees", args.trees, "--modes", "rewrite", "--text", "full"]
            argv += ["--jobs", "2", "--json-out", str(out)]
            argv += [arg for i in ids for arg in ("--only", i)]
            subprocess.run(argv, cwd=REPO, check=True, stdout=subprocess.DEVNULL)
            (run,) = _loc.read(str(out))
            instances += run.instances
    figures = {
        "file Hit@1": sum(_loc.hit(i, 1) for i in instances),
        "file Hit@5": sum(_loc.hit(i, 5) for i in instances),
        "function Hit@5": sum(bool(i.fn) for i in instances),
    }
    now = {"issues": len(instances), "figures": figures}

    def judge(base: dict) -> Outcome:
        old = base["figures"]
        cells = [f"{k} {v}/{len(instances)} (was {old.get(k)})" for k, v in figures.items()]
        worse = [k for k, v in figures.items() if v < old.get(k, 0)]
        return Outcome("FAIL" if worse else "PASS", ", ".join(cells))

    return now, judge


def everyday(args: argparse.Namespace) -> tuple[dict, Callable[[dict], Outcome]] | Outcome:
    if not (REPO / "bench" / "everyday.py").exists():
        return Outcome("N/A", "not available: bench/everyday.py is not in this checkout")
    if not args.everyday_trees:
        return Outcome("N/A", f"no trees: --everyday-trees DIR or ${_common.HEAD_TREES}")
    baseline = BASELINES / "everyday.json.gz"
    with scratch_dir() as tmp:
        out = Path(tmp) / "everyday.json.gz"
        argv = [sys.executable, "-m", "bench.everyday", "--json-out", str(out), "--jobs", "2"]
        argv += ["--cache", EVERYDAY_CACHE, "--trees", args.everyday_trees]
        run = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
        if run.returncode != 0:
            tail = (run.stderr.strip().splitlines() or ["(no message)"])[-1]
            return Outcome("FAIL", f"bench.everyday exited {run.returncode}: {tail}")
        now = _everyday.read(str(out))
        if args.update:
            _everyday.write(str(baseline), portable(now))
            return Outcome("PASS", f"baseline written: {_everyday_cells(now, None)}")
    if not baseline.exists():
        return _no_baseline("everyday")
    return _everyday_outcome(_everyday.read(str(baseline)), now)


def portable(run: _everyday.RunFile) -> _everyday.RunFile:
    """``run`` as a committed baseline: its data file relative to the repository and no
    checkout path among its options (directories of one machine)."""
    data = Path(run.data)
    if data.is_absolute() and data.is_relative_to(REPO):
        data = data.relative_to(REPO)
    options = [o for o in run.options if not o.startswith("--cq-checkout=")]
    return _everyday.RunFile(data=str(data), options=options, outcomes=run.outcomes)


def _pooled(run: _everyday.RunFile) -> tuple[float, float]:
    """Pooled Answer@1 and top-5 of a run, in percent."""
    n = len(run.outcomes) or 1
    return (
        100.0 * sum(o.ans for o in run.outcomes) / n,
        100.0 * sum(o.top5 for o in run.outcomes) / n,
    )


def _everyday_cells(now: _everyday.RunFile, base: _everyday.RunFile | None) -> str:
    ans, top5 = _pooled(now)
    if base is None:
        return f"Answer@1 {ans:.1f}, top-5 {top5:.1f} ({len(now.outcomes)} questions)"
    old_ans, old_top5 = _pooled(base)
    return (
        f"Answer@1 {ans:.1f} (baseline {old_ans:.1f}), top-5 {top5:.1f} (baseline "
        f"{old_top5:.1f}), {len(now.outcomes)} questions"
    )


def _everyday_outcome(base: _everyday.RunFile, now: _everyday.RunFile) -> Outcome:
    """FAIL when the pooled Answer@1 or top-5 fell by more than ``EVERYDAY_SLACK`` points, or
    the run asked other questions than the baseline (the set changed: ``--update``); the line
    counts the questions that went either way (``bench.everyday --compare`` lists them)."""
    if {o.id for o in now.outcomes} != {o.id for o in base.outcomes}:
        return Outcome("N/A", "the question set differs from the baseline's: --update")
    old = {o.id: (o.ans, o.top5) for o in base.outcomes}
    worse = sum(1 for o in now.outcomes if (o.ans, o.top5) < old[o.id])
    better = sum(1 for o in now.outcomes if (o.ans, o.top5) > old[o.id])
    (ans, top5), (old_ans, old_top5) = _pooled(now), _pooled(base)
    fell = ans < old_ans - EVERYDAY_SLACK or top5 < old_top5 - EVERYDAY_SLACK
    moved = f"; {worse} questions worse, {better} better" if worse or better else ""
    return Outcome("FAIL" if fell else "PASS", _everyday_cells(now, base) + moved)


def latency(args: argparse.Namespace) -> tuple[dict, Callable[[dict], Outcome]]:
    from bench.latency import measure

    root, exclude = _common.stdlib_dir(), ["site-packages/**"]
    rows = {q: measure(q, root, LATENCY_RUNS, False, exclude, []) for q in LATENCY_QUERIES}
    ratios = {q: row["cq_cpu"] / row["rg_cpu"] for q, row in rows.items()}
    walls = {q: row["cq"] / row["rg"] for q, row in rows.items()}
    now = {"python": _python(), "cpu_ratio": ratios}

    def judge(base: dict) -> Outcome:
        if (other := _same_python(base)) is not None:
            return other
        old = base["cpu_ratio"]
        cells = [
            f"{q} cpu x{ratios[q]:.1f} (baseline x{old[q]:.1f}), wall x{walls[q]:.1f}"
            for q in LATENCY_QUERIES
        ]
        worse = [q for q in LATENCY_QUERIES if ratios[q] > old[q] * LATENCY_SLACK]
        return Outcome("FAIL" if worse else "PASS", "; ".join(cells))

    return now, judge


CHECKS: dict[str, Measure] = {
    "golden": golden,
    "classify": classify,
    "localization": localization,
    "everyday": everyday,
    "latency": latency,
}


def run_check(name: str, args: argparse.Namespace) -> Outcome:
    try:
        measured = CHECKS[name](args)
    except Exception as exc:  # a check that cannot run is a failed gate, said in one line
        return Outcome("FAIL", f"{type(exc).__name__}: {exc}")
    if isinstance(measured, Outcome):
        return measured
    now, judge = measured
    if args.update:
        BASELINES.mkdir(exist_ok=True)
        (BASELINES / f"{name}.json").write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
        return judge(now)
    base = _baseline(name)
    return judge(base) if base is not None else _no_baseline(name)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", choices=list(CHECKS), help="run only these")
    ap.add_argument("--update", action="store_true", help="write the baselines from this run")
    ap.add_argument(
        "--trees",
        default=os.environ.get(_common.EVAL_TREES),
        metavar="DIR",
        help=f"localization trees, DIR/<instance_id> (${_common.EVAL_TREES})",
    )
    ap.add_argument(
        "--eval",
        type=Path,
        default=Path(os.environ.get("CQ_BENCH_EVAL_DIR") or EVAL_DIR),
        metavar="DIR",
        help="the tuning sets (default: ../shared/eval beside the repository; $CQ_BENCH_EVAL_DIR)",
    )
    ap.add_argument(
        "--everyday-trees",
        default=os.environ.get(_common.HEAD_TREES),
        metavar="DIR",
        help=f"the everyday set's trees (${_common.HEAD_TREES})",
    )
    args = ap.parse_args()
    failed = False
    for name in args.only or list(CHECKS):
        outcome = run_check(name, args)
        failed |= outcome.status == "FAIL"
        print(f"{outcome.status:<4} {name:<12} {outcome.detail}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
