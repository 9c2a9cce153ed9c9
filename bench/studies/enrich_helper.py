"""When does a forked enrichment helper (``cq/enrich/shown.py``'s ``_Share``) pay?

For each query, one cold search on the stdlib (no site-packages) is run in-process to get its
shown findings; then their enrichment (``enrich_shown``, no cache, parse caches emptied each
time) is timed alone and with the helper, interleaved, ``--runs`` times. Printed: the bytes of
the shown files, the medians of the wall time, of this process's CPU (the critical path when a
second core is free) and of the helper's CPU (``RUSAGE_CHILDREN``). The helper pays where this
process's CPU with it, plus the fork, is under its CPU alone by more than the noise;
``EnrichTuning.helper_min_bytes`` sits below the smallest such size. Report the load
(``uptime``) with the figures: on a busy machine the wall column says little.

    python -m bench.studies.enrich_helper --runs 5
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from typing import Any

import msgspec

from bench._common import median, stdlib_dir

QUERIES = ("getpass", "sched", "register", "warn", "__init__")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=stdlib_dir())
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("-q", "--query", action="append")
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.1f}")
    print(
        f"{'query':<10}{'files':>6}{'KB':>7}{'alone s':>9}{'cpu':>7}"
        f"{'helper s':>10}{'cpu':>7}{'child cpu':>10}"
    )
    for query in args.query or QUERIES:
        corpus, shown, settings = _shown(query, args.root)
        sources = {f.file: corpus.source(f.file, f.language) for f in shown}
        size = sum(len(s.data) for s in sources.values() if s is not None) / 1024
        alone: list[tuple[float, float, float]] = []
        helped: list[tuple[float, float, float]] = []
        for _ in range(args.runs):
            alone.append(_time(corpus, shown, settings, 1 << 60))
            helped.append(_time(corpus, shown, settings, 0))
        print(
            f"{query:<10}{len(sources):>6}{size:>7.0f}"
            f"{median([a[0] for a in alone]):>9.3f}{median([a[1] for a in alone]):>7.3f}"
            f"{median([h[0] for h in helped]):>10.3f}{median([h[1] for h in helped]):>7.3f}"
            f"{median([h[2] for h in helped]):>10.3f}"
        )
    print(f"load after: {os.getloadavg()[0]:.1f}")


def _shown(query: str, root: str) -> tuple[Any, Any, Any]:
    """The corpus, shown findings and enrichment settings of one cold search."""
    import cq.pipeline
    from cq.model import SearchRequest

    captured: list[tuple[Any, Any, Any]] = []
    enrich = cq.pipeline.enrich_shown

    def capture(corpus: Any, shown: Any, settings: Any, check: Any) -> Any:
        captured.append((corpus, shown, settings))
        return enrich(corpus, shown, settings, check)

    cq.pipeline.enrich_shown = capture  # type: ignore[assignment]
    try:
        request = SearchRequest(
            query=query, root=root, exclude=("site-packages/**",), use_cache=False
        )
        cq.pipeline.run_search(request)
    finally:
        cq.pipeline.enrich_shown = enrich  # type: ignore[assignment]
    corpus, shown, settings = captured[0]
    return corpus, shown, msgspec.structs.replace(settings, use_store=False)


def _time(corpus: Any, shown: Any, settings: Any, threshold: int) -> tuple[float, float, float]:
    """Wall s, this process's CPU s and the children's CPU s of one cold enrichment."""
    from cq.enrich import enrich_shown
    from cq.parse import trees

    for lru in trees._registry.values():
        lru.items.clear()
    tuning = msgspec.structs.replace(settings.tuning, helper_min_bytes=threshold)
    settings = msgspec.structs.replace(settings, tuning=tuning)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu, wall = time.process_time(), time.perf_counter()
    enrich_shown(corpus, shown, settings)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    child = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    return wall, cpu, child


if __name__ == "__main__":
    main()
