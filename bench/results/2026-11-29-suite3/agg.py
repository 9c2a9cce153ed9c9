"""Sum ``cpuplug.py``'s lines per test file: ``python agg.py DIR RUN [TOP]``."""

from __future__ import annotations

import collections
import sys
from pathlib import Path

cpu: collections.Counter[str] = collections.Counter()
wall: collections.Counter[str] = collections.Counter()
tests: collections.Counter[str] = collections.Counter()
for path in Path(sys.argv[1]).glob(f"{sys.argv[2]}-*.tsv"):
    for line in path.read_text().splitlines():
        node, used, took = line.split("\t")
        module = node.split("::")[0]
        cpu[module] += float(used)
        wall[module] += float(took)
        tests[module] += 1
print(f"CPU inside tests {sum(cpu.values()):.0f} s over {sum(tests.values())} tests")
for module, used in cpu.most_common(int(sys.argv[3]) if len(sys.argv) > 3 else 50):
    print(f"{used:7.1f} {wall[module]:7.1f} {tests[module]:4d} {module}")
