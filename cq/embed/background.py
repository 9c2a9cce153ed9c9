"""Embedding builds the per-user server starts after a search: one process per root, niced.

A search that found the store behind its root's index says so (``want``); it never builds.
The server's search process, once the search is answered, starts what was wanted
(``start_wanted``): ``python -m cq.embed.build ROOT --model M``, detached, niced, on one BLAS
thread (the machine's other work comes first), with the cache dir the search used. A build
already running for the root holds its lock and the new one exits at once. A one-shot ``cq``
(no server) starts nothing: ``cq embed build`` is the foreground way.
"""

from __future__ import annotations

import os
import subprocess
import sys

_wanted: dict[tuple[str, str], str] = {}  # (root, model) -> the cache dir the search used
_running: list[subprocess.Popen[bytes]] = []  # reaped at the next call: no zombie lingers


def want(root: str, model: str) -> None:
    from cq.cache import cache_dir

    _wanted[(root, model)] = str(cache_dir())


def start_wanted() -> int:
    """Start a build for each root a search wanted since the last call; how many started."""
    _running[:] = [p for p in _running if p.poll() is None]
    started = 0
    while _wanted:
        (root, model), cache = _wanted.popitem()
        env = {
            **os.environ,
            "CQ_CACHE_DIR": cache,
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
        }
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "cq.embed.build", root, "--model", model],
                env=env,
                cwd="/",
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            _running.append(process)
            started += 1
        except OSError:
            continue
    return started
