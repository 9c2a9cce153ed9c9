"""Log every Python process a run starts (its argv and the test that started it) and, when
it exits by ``sys.exit``, ``atexit`` or ``os._exit``, its own CPU; one line each to
``$PROCLOG``. Processes killed by a signal log their start only. Forked children (no new
interpreter) log nothing: their CPU is their parent's waited children (``cpuplug``).

    PROCLOG=out.log PYTHONPATH=<this dir>:... python reap.py python -m pytest ...
    python procagg.py out.log
"""

from __future__ import annotations

import atexit
import os
import resource
import sys

_OUT = os.environ.get("PROCLOG")


def _argv() -> str:
    return " ".join(map(str, getattr(sys, "orig_argv", sys.argv)[1:4]))[:120]


def _write(cpu: str, sys_cpu: str, what: str) -> None:
    try:
        with open(_OUT or os.devnull, "a") as fh:
            fh.write(f"{os.getpid()}\t{cpu}\t{sys_cpu}\t{what}\t{_argv()}\n")
    except OSError:
        pass


def _exited() -> None:
    used = resource.getrusage(resource.RUSAGE_SELF)
    _write(f"{used.ru_utime + used.ru_stime:.3f}", f"{used.ru_stime:.3f}", "exit")


if _OUT:
    _real_exit = os._exit
    _pid = os.getpid()

    def _exit(code: int) -> None:
        if os.getpid() == _pid:
            _exited()
        _real_exit(code)

    os._exit = _exit
    atexit.register(_exited)
    _write("-", os.environ.get("PYTEST_CURRENT_TEST", "")[:150], "start")
