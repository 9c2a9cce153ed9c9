"""Leave-one-repository-out choice of ``IndexTuning.how_function_pool``.

Reads one ``bench.everyday --json-out`` run per pool size (``SIZE=RUN``), keeps the questions
of ``--kind`` (concept by default), and for each repository chooses the size the other ten
repositories score best on (Answer@1, then top-5, then the smaller pool), then scores the held-out
repository's questions at that size.

    python bench/results/2026-11-30-answer10/loo_pool.py 30=stem-ct.json.gz 60=s60-ct.json.gz \
        90=s90-c.json.gz
"""

from __future__ import annotations

import argparse

from bench import _everyday


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+", metavar="SIZE=RUN")
    ap.add_argument("--kind", default="concept")
    args = ap.parse_args()
    runs: dict[int, dict[str, _everyday.Outcome]] = {}
    for spec in args.runs:
        size, path = spec.split("=", 1)
        run = _everyday.read(path)
        runs[int(size)] = {o.id: o for o in run.outcomes if o.kind == args.kind}
    sizes = sorted(runs)
    ids = sorted(set.intersection(*(set(r) for r in runs.values())))
    repos = sorted({runs[sizes[0]][i].repo for i in ids})

    def score(size: int, keep: list[str]) -> tuple[int, int]:
        return (sum(runs[size][i].ans for i in keep), sum(runs[size][i].top5 for i in keep))

    print(f"{len(ids)} {args.kind} questions, {len(repos)} repositories")
    for size in sizes:
        a, t = score(size, ids)
        print(f"in sample, pool {size}: Answer@1 {a}, top-5 {t}")
    held_a = held_t = 0
    for repo in repos:
        train = [i for i in ids if runs[sizes[0]][i].repo != repo]
        test = [i for i in ids if runs[sizes[0]][i].repo == repo]
        chosen = max(sizes, key=lambda s: (*score(s, train), -s))
        a, t = score(chosen, test)
        held_a, held_t = held_a + a, held_t + t
        print(f"  {repo:12} chooses {chosen:3}: held out {a}/{len(test)} Answer@1, {t} top-5")
    n = len(ids)
    print(
        f"held out: Answer@1 {held_a}/{n} ({100 * held_a / n:.1f}), top-5 {held_t}/{n} "
        f"({100 * held_t / n:.1f})"
    )


if __name__ == "__main__":
    main()
