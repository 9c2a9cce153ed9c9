"""Cold and warm questions on a tree of seven tuning repositories, next to rg in the same run.

Target (issue 34): the first question on a root (a fresh ``CQ_CACHE_DIR``: no index, no
parse, enrichment or vocabulary cache) answers with p90 <= 10 s on 2 cores with the other
core busy (``--busy 1``), and a warm question (its index built) in <= 1 s.

For each of ``--issues`` tuning issues of the tree's repositories (``_loc.sample`` over
``python_tuning.jsonl``): a fresh cache dir, the issue's full text as the first (cold)
question, its title as the second, right after; then ``cq index`` until it has nothing left
to do (untimed: the index as a later session finds it, the build a first question left to a
process of its own included) and the full text again (warm). ``--via in-process`` (default)
runs the questions with ``CQ_SERVER=0``; ``--via server`` through the per-user server (a
private runtime dir per issue: the first question starts the server and runs in-process, the
next ones go to the server), stopped after each issue. rg searches the same tree for the title's
five longest words (``rg --json -i``) in the same round, for the ratio. Each search's
``--timeout`` is the profile's unless ``--`` passes one. The report says, per issue, what
each answer had (the index fused or not: ``summary.telemetry.index``).

The tree (``--make-tree DIR``) is the one ``index_speed.py`` and ``studies/scale_localization``
use: the trees of pytorch-lightning 4781, MONAI 1478, allennlp 4825, pyro 2705, gluonts 1157,
tensorpack 1252 and ignite 1476 side by side (2,643 files, 2,624 of them Python), from the bare
mirrors (``prepare_eval_trees.py``).

    python -m bench.cold_questions --make-tree /tmp/cold-tree
    python -m bench.cold_questions --root /tmp/cold-tree --issues 8 --busy 1
    python -m bench.cold_questions --root /tmp/cold-tree --issues 8 --busy 1 --via server
    python -m bench.cold_questions --issues 8 --busy 1 --cq-checkout /tmp/cq-base   # before
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import _common, _loc
from bench._common import cq_command, median, rg_binary, scratch_dir
from bench.golden import burners

TREES = {  # folder -> (repository, the tuning issue whose base commit it holds)
    "pytorch-lightning": ("Lightning-AI/pytorch-lightning", "4781"),
    "MONAI": ("Project-MONAI/MONAI", "1478"),
    "allennlp": ("allenai/allennlp", "4825"),
    "pyro": ("pyro-ppl/pyro", "2705"),
    "gluonts": ("awslabs/gluonts", "1157"),
    "tensorpack": ("tensorpack/tensorpack", "1252"),
    "ignite": ("pytorch/ignite", "1476"),
}
DATA = "../shared/eval/python_tuning.jsonl"


def make_tree(target: Path, data: str, mirrors: str) -> None:
    """The seven repositories at their issues' base commits, under one folder each."""
    from bench.prepare_eval_trees import BlobStore, materialise

    rows = {r["instance_id"]: r for r in _loc.load_rows(data)}
    target.mkdir(parents=True, exist_ok=True)
    blobs = target.with_name(target.name + ".blobs")
    total = 0
    for folder, (repo, number) in TREES.items():
        row = rows[f"{repo.replace('/', '__')}-issue-{number}"]
        store = BlobStore(str(Path(mirrors) / repo.replace("/", "+") / "repo"), blobs)
        try:
            total += materialise(store, row["base_commit"], "python", target / folder)
        finally:
            store.close()
    print(f"{target}: {total} files")


CPU: dict[str, list[float]] = {"cold": [], "second": [], "warm": []}
CHECKOUT: list[str] = []  # --cq-checkout: run there, as `python -m cq` imports from the cwd


def run(argv: list[str], stdin: bytes, env: dict[str, str], kind: str = "") -> tuple[float, bytes]:
    """Wall seconds and stdout; ``kind``: keep the CPU seconds (the process's and its
    children's: rg, pool workers) under that name. On 2 cores with the other one busy a
    search has about one core, so its CPU seconds are about its wall time there, whatever
    else loads a shared machine."""
    env = {**os.environ, **env}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # compiled once, as an installed cq's modules are
    started = time.perf_counter()
    with tempfile.TemporaryFile() as given:
        given.write(stdin)
        given.seek(0)
        proc = subprocess.Popen(
            argv,
            stdin=given,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=CHECKOUT[0] if CHECKOUT else None,
        )
        out = proc.stdout.read() if proc.stdout else b""
        _, _, usage = os.wait4(proc.pid, 0)
    if kind:
        CPU[kind].append(usage.ru_utime + usage.ru_stime)
    return time.perf_counter() - started, out


def p90(values: list[float]) -> float:
    """Nearest rank: the smallest value at or above 90% of the runs."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)] if ordered else float("nan")


def had(stdout: bytes) -> str:
    """What an answer had: the index fused (its files), or not."""
    try:
        data = json.loads(stdout)
    except ValueError:
        return "no report"
    index = data["summary"].get("telemetry", {}).get("index")
    return "index" if index and "files" in index else "no index"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", help="the stand-in tree (made by --make-tree)")
    ap.add_argument("--make-tree", metavar="DIR", help="build the tree at DIR and exit")
    ap.add_argument(
        "--mirrors", default=os.environ.get(_common.MIRRORS), help="bare mirrors (--make-tree)"
    )
    ap.add_argument("--data", default=DATA)
    ap.add_argument("--issues", type=int, default=8)
    ap.add_argument("--busy", type=int, default=0, metavar="N", help="CPU burners")
    ap.add_argument("--via", choices=("in-process", "server"), default="in-process")
    ap.add_argument("--json-out", help="per-issue figures as JSON")
    ap.add_argument("--cq-checkout", metavar="DIR", help="run another source tree's cq (before)")
    ap.add_argument("extra", nargs="*", help="more cq search arguments, after --")
    args = ap.parse_args()
    if args.make_tree:
        if not args.mirrors:
            ap.error(f"--make-tree needs --mirrors DIR (or ${_common.MIRRORS})")
        make_tree(Path(args.make_tree), args.data, args.mirrors)
        return 0
    if not args.root:
        ap.error("--root DIR: the tree --make-tree made")
    root = Path(args.root)
    repos = {repo: folder for folder, (repo, _) in TREES.items()}
    rows = _loc.sample([r for r in _loc.load_rows(args.data) if r["repo"] in repos], args.issues)
    files = sum(1 for p in root.rglob("*") if p.is_file())
    search = [*cq_command(), "search", "-", "--root", str(root), "--format", "json", *args.extra]
    server = args.via == "server"
    if args.cq_checkout:
        os.environ["PYTHONPATH"] = args.cq_checkout
        CHECKOUT.append(args.cq_checkout)
    # Compiled bytecode and the page cache, so the first issue is not colder than the rest.
    with scratch_dir() as warmup:
        run(search, b"warm up", {"CQ_CACHE_DIR": warmup, "CQ_SERVER": "0", "CQ_LLM": "off"})
    print(f"tree: {root} ({files} files)  issues: {len(rows)}  busy: {args.busy}  via: {args.via}")
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    results = []
    with burners(args.busy):
        for row in rows:
            cache = tempfile.mkdtemp(prefix="cq-cold-cache")
            runtime = tempfile.mkdtemp(prefix="cqr", dir="/tmp")
            env = {"CQ_CACHE_DIR": cache, "CQ_LLM": "off", "CQ_SERVER": "1" if server else "0"}
            if server:
                env["XDG_RUNTIME_DIR"] = runtime
            title = _loc.title(row["problem_statement"])
            try:
                cold, first = run(search, row["problem_statement"].encode(), env, "cold")
                if server:  # the server the first question started is up before the second
                    start = [*cq_command(), "server", "start"]
                    subprocess.run(
                        start, env={**os.environ, **env}, cwd=CHECKOUT[0] if CHECKOUT else None
                    )
                second_s, second = run(search, title.encode(), env, "second")
                index = [*cq_command(), "index", "--root", str(root)]
                for _ in range(30):  # until the build (maybe behind the first) is done
                    done = subprocess.run(
                        index,
                        env={**os.environ, **env},
                        capture_output=True,
                        cwd=CHECKOUT[0] if CHECKOUT else None,
                    ).stdout.decode()
                    if "updated: 0 files" in done and "another cq process" not in done:
                        break
                    time.sleep(1)
                warm, third = run(search, row["problem_statement"].encode(), env, "warm")
                words = sorted(set(re.findall(r"[A-Za-z_]\w{3,}", title)), key=len)[-5:]
                rg_argv = [rg_binary(), "--json", "-i", *(a for w in words for a in ("-e", w))]
                rg, _ = run([*rg_argv, str(root)], b"", {})
            finally:
                if server:
                    subprocess.run(
                        [*cq_command(), "server", "stop"],
                        env={**os.environ, **env},
                        capture_output=True,
                        cwd=CHECKOUT[0] if CHECKOUT else None,
                    )
                shutil.rmtree(cache, ignore_errors=True)
                shutil.rmtree(runtime, ignore_errors=True)
            item = {
                "issue": row["instance_id"],
                "cold_s": round(cold, 2),
                "second_s": round(second_s, 2),
                "warm_s": round(warm, 2),
                "rg_s": round(rg, 3),
                "first": had(first),
                "second": had(second),
                "warm": had(third),
            }
            results.append(item)
            print(
                f"{item['issue']:<44} cold {cold:6.2f} s ({item['first']})  second "
                f"{second_s:5.2f} s ({item['second']})  warm {warm:5.2f} s ({item['warm']})  "
                f"rg {rg:5.3f} s",
                flush=True,
            )
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    rg_median = median([r["rg_s"] for r in results])
    for kind in ("cold", "second", "warm"):
        values = [r[f"{kind}_s"] for r in results]
        print(
            f"{kind:<6} median {median(values):6.2f} s  p90 {p90(values):6.2f} s  "
            f"max {max(values):6.2f} s  median/rg {median(values) / rg_median:6.1f}x  "
            f"CPU-s median {median(CPU[kind]):5.2f} p90 {p90(CPU[kind]):5.2f}"
        )
    print(f"rg     median {rg_median:6.3f} s")
    fused = {k: sum(r[k] == "index" for r in results) for k in ("first", "second", "warm")}
    print("index fused: " + ", ".join(f"{k} {n}/{len(results)}" for k, n in fused.items()))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
