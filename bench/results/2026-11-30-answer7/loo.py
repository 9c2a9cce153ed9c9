"""Leave one repository out over everyday runs of several settings of one number.

    python bench/results/2026-11-30-answer7/loo.py 0=c0.json.gz,t0.json.gz 0.5=c5.json.gz,...

Each argument is a setting and the ``bench.everyday --json-out`` files of its runs (the same
questions in each setting). For each repository, the setting with the most Answers, then
top-5, on the other repositories (ties: the first listed) is scored on it; the sums are the
held-out figure, printed beside each setting's in-sample one.
"""

from __future__ import annotations

import gzip
import json
import sys


def outcomes(paths: str) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for path in paths.split(","):
        with gzip.open(path) as f:
            for o in json.load(f)["outcomes"]:
                out[o["id"]] = o
    return out


def main(args: list[str]) -> None:
    runs = [(a.split("=", 1)[0], outcomes(a.split("=", 1)[1])) for a in args]
    ids = sorted(set.intersection(*(set(r) for _, r in runs)))
    repos = sorted({runs[0][1][i]["repo"] for i in ids})
    for label, r in runs:
        by_kind: dict[str, list[int]] = {}
        for i in ids:
            k = by_kind.setdefault(r[i]["kind"], [0, 0, 0])
            k[0] += r[i]["ans"]
            k[1] += r[i]["top5"]
            k[2] += 1
        kinds = ", ".join(f"{k} {a}/{t} of {n}" for k, (a, t, n) in sorted(by_kind.items()))
        print(f"setting {label}: in sample {kinds}")
    held = [0, 0]
    held_kind: dict[str, list[int]] = {}
    for repo in repos:

        def fit(r: dict[str, dict], repo: str = repo) -> tuple[int, int]:
            rest = [r[i] for i in ids if r[i]["repo"] != repo]
            return sum(o["ans"] for o in rest), sum(o["top5"] for o in rest)

        best = max(range(len(runs)), key=lambda k: (fit(runs[k][1]), -k))
        label, r = runs[best]
        mine = [r[i] for i in ids if r[i]["repo"] == repo]
        held[0] += sum(o["ans"] for o in mine)
        held[1] += sum(o["top5"] for o in mine)
        for o in mine:
            k = held_kind.setdefault(o["kind"], [0, 0, 0])
            k[0] += o["ans"]
            k[1] += o["top5"]
            k[2] += 1
        print(f"held out {repo}: chose {label}")
    kinds = ", ".join(f"{k} {a}/{t} of {n}" for k, (a, t, n) in sorted(held_kind.items()))
    print(f"leave-one-repository-out: Answer {held[0]}, top-5 {held[1]} of {len(ids)} ({kinds})")


if __name__ == "__main__":
    main(sys.argv[1:])
