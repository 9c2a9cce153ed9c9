"""Sum ``proclog``'s lines by kind of process: ``python procagg.py LOG`` prints the CPU and
count of the processes that logged their exit, then the starts per test file and kind."""

from __future__ import annotations

import collections
import re
import sys
from pathlib import Path

cpu: collections.Counter[str] = collections.Counter()
ended: collections.Counter[str] = collections.Counter()
started: collections.Counter[str] = collections.Counter()
for line in Path(sys.argv[1]).read_text(encoding="utf-8", errors="replace").splitlines():
    pid, used, extra, what, argv = (line.split("\t") + [""] * 5)[:5]
    kind = " ".join(re.sub(r"/(tmp|dev)/\S*", "", argv).split()[:3])
    if what == "start":
        started[f"{extra.split('::')[0]} | {kind}"] += 1
    elif what in ("exit", "_exit") and re.fullmatch(r"[\d.]+", used):  # (a test id can hold a tab)
        cpu[kind] += float(used)
        ended[kind] += 1
print("CPU-s  exits  kind")
for kind, used in cpu.most_common(25):
    print(f"{used:6.1f} {ended[kind]:5d}  {kind}")
print("\nstarts  test file | kind")
for key, count in started.most_common(40):
    print(f"{count:6d}  {key}")
