"""Speed of the repository index on a ~2,500-file tree, with rg in the same run.

Measures: (1) the first build inside a cold search (fresh CQ_CACHE_DIR; the index's own
milliseconds from ``run.timings_ms.index``, how long the search waited for it,
``index.wait``, as the update runs beside rg and classification, and the whole search's wall
time, CPU seconds and peak RSS, against the same search ``--no-index``), (2) the index's
size on disk against the indexed source bytes (``cq index``), (3) warm questions, with the
index, with ``--no-index`` and with ``--no-semantic`` (the semantic stage's budget is a
second of its own), median and max wall and median CPU, and whether an unchanged tree was
re-indexed (``files_updated``), (4) identifier-search latency with the index in the cache,
against ``rg -w`` and, with ``--base DIR`` (a ``git archive`` of an older cq), that cq;
``--base`` also runs that cq's cold searches (1) interleaved with this one's;
``--cold-no-semantic`` runs those with ``CQ_SEMANTIC=0``, so the CPU seconds the index adds
are not lost in Pyrefly's (two pairs did not resolve 0.6 CPU-s with it on).
Runs are interleaved so machine noise hits all alike; the load average is printed at the
start and the end (this machine has 2 cores shared with other work). Peak RSS is cq's main
process's own (``cq_rss.py``), cold and warm; its largest child's (Pyrefly's ``lsp`` process,
whose memory issue 15 reports, or a pool worker) is printed apart. Before, this printed
``wait4``'s figure, the larger of the two: 338 MB was Pyrefly's, cq's own was ~125 MB.

    python -m bench.index_speed --root $CQ_BENCH_INDEX_TREE --runs 5 --base /tmp/cq-base

``--tree NAME=DIR`` (repeatable) measures large trees instead, each run from a fresh cache
dir: ``cq index``'s first build (wall and CPU seconds), then a cold first question (the
tree's questions in turn: ``TREE_QUESTIONS``, else ``QUESTIONS``) with its p50/p90 wall time
and how many answered with the index fused (``summary.telemetry.index.files``) or without it
(``unused``), and rg over the tree for the question's longest word in the same round.

    python -m bench.index_speed --tree moto=$CQ_BENCH_TREES/moto --tree MONAI=$CQ_BENCH_TREES/MONAI
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from pathlib import Path

from bench import _common
from bench._common import median, rg_binary, scratch_dir, time_command, time_cq

QUESTIONS = (
    "how is the learning rate scheduler stepped after every epoch?",
    "where are checkpoints saved to disk and loaded back?",
    "the sliding window inference pads the input image with zeros",
    "early stopping does not stop training when the monitored metric is missing",
    "which class reads vocabulary files for the tokenizer",
    "gradient clipping is applied before the optimizer step",
    "metrics are not synchronized across distributed processes",
    "how do I resize a 3D medical image while keeping its spacing",
)
IDENTIFIERS = ("LightningModule", "sliding_window_inference", "Vocabulary")
TREE_QUESTIONS = {  # --tree NAME: questions a user of that repository asks
    "moto": (
        "how are buckets created?",
        "where is the bucket policy validated?",
        "deleting an object from a bucket that does not exist raises the wrong error",
        "how does an SQS queue hide received messages for the visibility timeout?",
        "which function adds tags to EC2 instances?",
    ),
}


def cq(python: str, checkout: str, *args: str, env: dict[str, str]) -> tuple[float, float, dict]:
    """Wall seconds, the main process's peak RSS (MB) and the JSON report of this checkout's
    cq (or another's, ``--base``, which may predate ``cq_rss.py``: its RSS is ``wait4``'s)."""
    if checkout == HERE:
        t = time_cq(list(args), env=env, cwd=checkout)
    else:
        t = time_command([python, "-m", "cq", *args], env=env, cwd=checkout)
    data = json.loads(t.stdout) if t.stdout.startswith(b"{") else {}
    CPU.append(t.cpu_seconds)
    CHILD_RSS.append(t.children_rss_mb)
    return t.seconds, t.main_rss_mb or t.max_rss_mb, data


HERE = str(Path(__file__).resolve().parent.parent)
CPU: list[float] = []  # CPU seconds of every cq run, in order
CHILD_RSS: list[float] = []  # peak RSS of the largest child (Pyrefly, a worker) of every run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--root",
        default=os.environ.get(_common.INDEX_TREE) or None,
        metavar="DIR",
        help=f"a ~2,500-file tree (${_common.INDEX_TREE}); not needed with --tree",
    )
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument(
        "--base",
        help="a checkout of another cq, timed on the cold searches (interleaved) and on "
        "identifier searches",
    )
    ap.add_argument(
        "--cold-no-semantic",
        action="store_true",
        help="the cold searches (1) with CQ_SEMANTIC=0: Pyrefly's server (~1.1 CPU-s of a cold "
        "search, more the longer the search lasts) otherwise hides the index's CPU seconds",
    )
    ap.add_argument(
        "--tree",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="large trees: first build and cold first question, see above",
    )
    args = ap.parse_args()
    if args.tree:
        return _large_trees(dict(spec.partition("=")[::2] for spec in args.tree), args.runs)
    if not args.root:
        ap.error(f"give --root DIR (or ${_common.INDEX_TREE}), or --tree NAME=DIR")
    cold_env = {"CQ_SEMANTIC": "0"} if args.cold_no_semantic else {}
    here = HERE
    py = sys.executable
    q0 = QUESTIONS[0]
    ask = ["search", "--format", "json", "--root", args.root, "--rewrite"]
    rg_q = [rg_binary(), "--json", "-i", "-e", "scheduler", args.root]

    print(f"tree: {args.root}; load average {_load()}")
    if cold_env:
        print("cold searches with CQ_SEMANTIC=0 (--cold-no-semantic)")
    builds, waits, walls, rss, nos, rgs, cpu_with, cpu_no = [], [], [], [], [], [], [], []
    rss_no, child_rss = [], []
    base_cold: dict[str, list[float]] = {k: [] for k in ("index", "wait", "wall", "cpu", "added")}
    for _ in range(args.runs):
        with scratch_dir() as c1, scratch_dir() as c2:
            s, r, data = cq(py, here, *ask, q0, env={"CQ_CACHE_DIR": c1, **cold_env})
            cpu_with.append(CPU[-1])
            child_rss.append(CHILD_RSS[-1])
            index = data["summary"]["telemetry"]["index"]
            timings = data["run"]["timings_ms"]
            builds.append(timings["index"] / 1000)
            waits.append(timings.get("index.wait", timings["index"]) / 1000)
            walls.append(s)
            rss.append(r)
            s, r, _ = cq(py, here, *ask, q0, "--no-index", env={"CQ_CACHE_DIR": c2, **cold_env})
            nos.append(s)
            rss_no.append(r)
            cpu_no.append(CPU[-1])
            rgs.append(time_command(rg_q).seconds)
            if args.base:  # the other cq's same pair, interleaved with this one's
                _cold_pair(py, args.base, [*ask, q0], base_cold, cold_env)
    added = [w - n for w, n in zip(cpu_with, cpu_no, strict=True)]
    print(f"files indexed: {index['files']}, documents: {index['documents']}")
    print(
        f"cold search, first build of the index: index {median(builds):.2f} s (max "
        f"{max(builds):.2f}), the search waited for it {median(waits):.2f} s; whole search "
        f"{median(walls):.2f} s wall, {median(cpu_with):.2f} CPU-s; same search --no-index "
        f"{median(nos):.2f} s wall, {median(cpu_no):.2f} CPU-s; rg {median(rgs):.3f} s; CPU "
        f"seconds the index added (user + system, workers included) {median(added):.2f}, so "
        f">= {median(added) / 2:.2f} s wall on 2 idle cores"
    )
    if args.base:
        b = {k: median(v) for k, v in base_cold.items()}
        print(
            f"base cq, same cold searches: index {b['index']:.2f} s (max "
            f"{max(base_cold['index']):.2f}), waited {b['wait']:.2f} s; whole search "
            f"{b['wall']:.2f} s wall, {b['cpu']:.2f} CPU-s; CPU seconds the index added "
            f"{b['added']:.2f} (this cq {median(added):.2f})"
        )
    print(
        f"cold search peak RSS, cq's main process: max {max(rss):.0f} MB (median "
        f"{median(rss):.0f}; --no-index max {max(rss_no):.0f}); its largest child (Pyrefly, "
        f"a pool worker), apart: max {max(child_rss):.0f} MB"
    )

    with scratch_dir() as cache:
        env = {"CQ_CACHE_DIR": cache}
        out = time_command([py, "-m", "cq", "index", "--root", args.root], env=env, cwd=here)
        text = out.stdout.decode()
        size = re.search(r"size: ([\d.]+) MB \((\d+)% of the source\)", text)
        source = re.search(r"\(([\d.]+) MB of source\)", text)
        print(f"index size: {size.group(1)} MB = {size.group(2)}% of {source.group(1)} MB source")
        for q in QUESTIONS:  # warm the search caches too
            cq(py, here, *ask, q, env=env)
            cq(py, here, *ask, q, "--no-index", env=env)
        warm, warm_no, warm_nosem, cpu_warm, waited, updated, rg_w = [], [], [], [], [], 0, []
        warm_rss, warm_child = [], []
        for _ in range(max(1, args.runs // 2)):
            for q in QUESTIONS:
                s, r, data = cq(py, here, *ask, q, env=env)
                warm.append(s)
                cpu_warm.append(CPU[-1])
                warm_rss.append(r)
                warm_child.append(CHILD_RSS[-1])
                timings = data["run"]["timings_ms"]
                waited.append(timings.get("index.wait", timings["index"]) / 1000)
                updated += data["run"]["counters"].get("index.files_updated", 0)
                warm_no.append(cq(py, here, *ask, q, "--no-index", env=env)[0])
                warm_nosem.append(cq(py, here, *ask, q, "--no-semantic", env=env)[0])
                rg_w.append(
                    time_command(
                        [rg_binary(), "--json", "-i", "-e", q.split()[2], args.root]
                    ).seconds
                )
        print(
            f"warm questions ({len(warm)}): median {median(warm):.2f} s, max {max(warm):.2f} s, "
            f"median {median(cpu_warm):.2f} CPU-s (--no-index median {median(warm_no):.2f} s, "
            f"max {max(warm_no):.2f} s; --no-semantic median {median(warm_nosem):.2f} s, max "
            f"{max(warm_nosem):.2f} s); waited for the index: median {median(waited):.3f} s; "
            f"files re-indexed on the unchanged tree: {updated}; rg median {median(rg_w):.3f} s"
        )
        print(
            f"warm question peak RSS, cq's main process: max {max(warm_rss):.0f} MB (median "
            f"{median(warm_rss):.0f}); its largest child, apart: max {max(warm_child):.0f} MB"
        )
        for ident in IDENTIFIERS:
            cq(py, here, "search", ident, "--root", args.root, env=env)
            ours, base, rg = [], [], []
            for _ in range(args.runs):
                ours.append(cq(py, here, "search", ident, "--root", args.root, env=env)[0])
                if args.base:
                    base.append(cq(py, args.base, "search", ident, "--root", args.root, env=env)[0])
                rg.append(
                    time_command([rg_binary(), "--json", "-w", "-e", ident, args.root]).seconds
                )
            line = f"identifier {ident}: cq {median(ours):.2f} s"
            line += f", base cq {median(base):.2f} s" if base else ""
            print(line + f", rg {median(rg):.3f} s (ratio cq/rg {median(ours) / median(rg):.1f})")
    print(f"load average at the end: {_load()}")
    return 0


def _cold_pair(
    py: str, checkout: str, argv: list[str], out: dict[str, list[float]], env: dict[str, str]
) -> None:
    """A cold search of ``checkout``'s cq with its index built inside and one ``--no-index``
    (each with an empty cache, ``env`` added): the index's own time, the wait, wall, CPU,
    CPU added."""
    with scratch_dir() as c1, scratch_dir() as c2:
        seconds, _, data = cq(py, checkout, *argv, env={"CQ_CACHE_DIR": c1, **env})
        with_index = CPU[-1]
        cq(py, checkout, *argv, "--no-index", env={"CQ_CACHE_DIR": c2, **env})
    timings = data["run"]["timings_ms"]
    out["index"].append(timings["index"] / 1000)
    out["wait"].append(timings.get("index.wait", timings["index"]) / 1000)
    out["wall"].append(seconds)
    out["cpu"].append(with_index)
    out["added"].append(with_index - CPU[-1])


def _large_trees(trees: dict[str, str], runs: int) -> int:
    """Each tree's first build by ``cq index`` and its cold first questions, rg beside."""
    print(f"load average at the start: {_load()}")
    for name, root in trees.items():
        questions = TREE_QUESTIONS.get(name, QUESTIONS)
        build, build_cpu, cold, cold_cpu, rg, fused, unused = [], [], [], [], [], 0, []
        for run in range(runs):
            q = questions[run % len(questions)]
            with scratch_dir() as c1, scratch_dir() as c2:
                t = time_command(
                    [sys.executable, "-m", "cq", "index", "--root", root],
                    env={"CQ_CACHE_DIR": c1},
                    cwd=HERE,
                )
                build.append(t.seconds)
                build_cpu.append(t.cpu_seconds)
                ask = ["search", "--format", "json", "--root", root, q]
                seconds, _, data = cq(sys.executable, HERE, *ask, env={"CQ_CACHE_DIR": c2})
            cold.append(seconds)
            cold_cpu.append(CPU[-1])
            held = data.get("summary", {}).get("telemetry", {}).get("index", {})
            fused += "files" in held
            if held.get("unused"):
                unused.append(held["unused"])
            word = max(re.findall(r"[A-Za-z_]\w+", q), key=len)
            rg.append(time_command([rg_binary(), "--json", "-i", "-e", word, root]).seconds)
        print(
            f"{name}: first build (cq index) {median(build):.2f} s wall (max {max(build):.2f}), "
            f"{median(build_cpu):.2f} CPU-s; cold first question p50 {_pct(cold, 50):.2f} s, "
            f"p90 {_pct(cold, 90):.2f} s ({median(cold_cpu):.2f} CPU-s), with the index fused "
            f"{fused}/{runs}; rg {median(rg):.3f} s"
        )
        for why in sorted(set(unused)):
            print(f"    answered without the index: {why}")
    print(f"load average at the end: {_load()}")
    return 0


def _pct(values: list[float], p: int) -> float:
    """The nearest-rank percentile ``p`` of ``values``."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    raise SystemExit(main())
