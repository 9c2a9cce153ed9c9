"""``cq`` with peak RSS on stderr at exit, for bench/: ``maxrss_mb N`` (the main process's own)
and ``children_maxrss_mb N`` (the largest of the children it reaped: pool workers, Pyrefly, rg).

Why two figures: the rusage a parent gets from ``wait4`` gives the larger of the child's own
peak and those of the children it reaped, so a plain ``/usr/bin/time``-style peak of a search
with the semantic stage is Pyrefly's (~300 MB on bench/index_speed.py's tree), not cq's. The
figures are written by an ``atexit`` hook registered before cq is imported: hooks run last
registered first, so this one runs after cq's own have stopped Pyrefly and the pool.

The pool's spawned workers import this file as their main module; the guard keeps them
from running the CLI again.
"""

import atexit
import resource
import sys


def _report() -> None:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    sys.stderr.write(f"maxrss_mb {own:.0f}\nchildren_maxrss_mb {children:.0f}\n")


if __name__ == "__main__":
    atexit.register(_report)
    from cq.cli import main

    raise SystemExit(main(sys.argv[1:]))
