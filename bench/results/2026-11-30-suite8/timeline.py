"""Read ``timeplug``'s records of a run: each worker's span, the files by CPU, and the long
tests of the run's last 90 s (is one worker left running alone at the end?); with a second
run, the files of both side by side as a markdown table.

    python timeline.py <out>/<run> [<out>/<other run>] [--top 30]
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path


class Test:
    """One line of ``timeplug``: a test, its worker, CPU, wall and epoch start and end."""

    def __init__(self, worker: str, line: str) -> None:
        node, cpu, wall, start, end = line.rstrip("\n").split("\t")
        self.worker, self.node, self.file = worker, node, node.split("::")[0]
        self.cpu, self.wall = float(cpu), float(wall)
        self.start, self.end = float(start), float(end)


def read(run: Path) -> list[Test]:
    return [
        Test(path.stem.rsplit("-", 1)[1], line)
        for path in sorted(run.glob("*.tsv"))
        for line in path.read_text().splitlines()
    ]


def per_file(tests: list[Test]) -> dict[str, tuple[float, float]]:
    out: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0])
    for t in tests:
        out[t.file][0] += t.cpu
        out[t.file][1] += t.wall
    return {name: (cpu, wall) for name, (cpu, wall) in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    tests = read(args.runs[0])
    t0, t1 = min(t.start for t in tests), max(t.end for t in tests)
    print(f"span {t1 - t0:.1f} s, CPU inside tests {sum(t.cpu for t in tests):.1f} s")
    for worker in sorted({t.worker for t in tests}):
        mine = [t for t in tests if t.worker == worker]
        last = max(t.end for t in mine) - t0
        print(f"{worker}: last test ends at {last:.0f} s, CPU {sum(t.cpu for t in mine):.1f}")
    files = per_file(tests)
    if len(args.runs) > 1:
        other = per_file(read(args.runs[1]))
        print("| file | CPU a | CPU b | wall a | wall b |\n|---|---|---|---|---|")
        for name in sorted(files, key=lambda n: -files[n][0])[: args.top]:
            (ca, wa), (cb, wb) = files[name], other.get(name, (0.0, 0.0))
            print(f"| {Path(name).name} | {ca:.1f} | {cb:.1f} | {wa:.0f} | {wb:.0f} |")
    else:
        for name in sorted(files, key=lambda n: -files[n][0])[: args.top]:
            print(f"{files[name][0]:7.1f} CPU-s {files[name][1]:7.1f} s  {name}")
    print("long tests of the last 90 s:")
    for t in sorted(tests, key=lambda t: t.end):
        if t.end > t1 - 90 and t.wall > 3:
            print(f"{t.worker} {t.start - t0:5.0f}-{t.end - t0:5.0f} s {t.cpu:6.2f} CPU-s {t.node}")


if __name__ == "__main__":
    main()
