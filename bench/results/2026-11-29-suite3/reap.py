"""Run a command as a child subreaper (Linux) and print its wall time and the CPU of every
process it started, daemons that double-forked away included: they are re-parented here and
reaped when they end.

    python reap.py python -m pytest tests -n 2
"""

from __future__ import annotations

import ctypes
import os
import resource
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36

ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
started = time.monotonic()
code = subprocess.call(sys.argv[1:])
wall = time.monotonic() - started
while True:  # orphans already gone are reaped; one still running is said below
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        break
    if pid == 0:
        break
used = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = used.ru_utime + used.ru_stime
print(f"REAP rc={code} wall={wall:.1f} cpu={cpu:.1f} sys={used.ru_stime:.1f}", file=sys.stderr)
left = subprocess.run(["ps", "--ppid", str(os.getpid()), "-o", "pid=,args="], capture_output=True)
running = [ln for ln in left.stdout.decode().splitlines() if "ps --ppid" not in ln]
if running:
    print("REAP still running:", *running, sep="\n", file=sys.stderr)
sys.exit(code)
