"""``cq`` with its main process's peak RSS on stderr (``maxrss_mb N``) at exit, for bench/.

The pool's spawned workers import this file as their main module; the guard keeps them
from running the CLI again.
"""

import resource
import sys

if __name__ == "__main__":
    from cq.cli import main

    code = main(sys.argv[1:])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sys.stderr.write(f"maxrss_mb {peak:.0f}\n")
    raise SystemExit(code)
