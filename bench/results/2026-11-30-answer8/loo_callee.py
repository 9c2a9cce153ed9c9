"""The ``callee`` weight of ``replay.py`` held out by repository: each repository's questions
scored at the weight the other ten choose (most Answers gained over ``w`` = 0; ties: the
smaller weight).

    python bench/results/2026-11-30-answer8/loo_callee.py replay.txt
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPOS = [
    "allennlp",
    "chrono",
    "clap",
    "gluonts",
    "ignite",
    "marshmallow",
    "MONAI",
    "moto",
    "pyro",
    "sqlfluff",
    "torchio",
]
LINE = re.compile(r"callee\s+w=(\S+)\s+\d+/\d+\s*(.*)")


def main() -> None:
    grid: dict[float, dict[str, int]] = {}
    for line in Path(sys.argv[1]).read_text().splitlines():
        if m := LINE.match(line):
            moved = m.group(2).split()
            grid[float(m.group(1))] = {x[1:]: 1 if x[0] == "+" else -1 for x in moved}

    def gain(w: float, repos: list[str]) -> int:
        return sum(v for q, v in grid[w].items() if q.rsplit("-", 1)[0] in repos)

    total = 0
    for repo in REPOS:
        others = [r for r in REPOS if r != repo]
        chosen = max(sorted(grid), key=lambda w: (gain(w, others), -w))
        total += gain(chosen, [repo])
        print(f"{repo:12s} chooses w={chosen}, held out {gain(chosen, [repo]):+d}")
    best = max(sorted(grid), key=lambda w: (gain(w, list(REPOS)), -w))
    print(f"held out {total:+d}; in sample w={best} {gain(best, list(REPOS)):+d}")


if __name__ == "__main__":
    main()
