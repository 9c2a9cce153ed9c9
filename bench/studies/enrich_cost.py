"""What enrichment of the shown hits costs: wall time, payload size, per-stage time per hit.

1. Wall time of ``cq search QUERY`` (default limit) with enrichment against the same search
   with enrichment switched off (``CQ_ENRICH_BUDGET_MS=0``: every shown hit is skipped),
   interleaved, warm (one filling run first; the enrichment store is filled) and cold (empty
   cache dir every run). Also cq's own ``run.timings_ms.enrich`` (median).
2. Bytes of ``cq search QUERY --format json`` at the default limit, and the largest
   enrichment payload of one hit.
3. Per-hit stage timings (median, p95) in one fresh process, nothing stored: the cost of
   computing enrichment, parses included.

    python -m bench.studies.enrich_cost                          # stdlib, register and __init__
    python -m bench.studies.enrich_cost -q register --runs 7 -- --exclude 'site-packages/**'

``--hits N [N ...]`` measures instead what enriching the first N ranked hits of a ``--limit 0``
search costs, cold (a fresh corpus each time, nothing stored), wall and CPU: where
``[enrich] max_hits``, the bound on enriched hits, comes from.

    python -m bench.studies.enrich_cost -q get --hits 30 100 200 500
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from bench._common import cq_command, median, scratch_dir, stdlib_dir, time_command

_STAGES_SCRIPT = """
import json, sys
from pathlib import Path
import msgspec
from cq.enrich import EnrichSettings, enrich_shown
from cq.model import SearchRequest
from cq.parse import Corpus
from cq.pipeline import run_search
root, query, extra_exclude = sys.argv[1], sys.argv[2], tuple(sys.argv[3:])
request = SearchRequest(query=query, root=root, exclude=extra_exclude, use_cache=False)
result = run_search(request)
plain = [msgspec.structs.replace(f, enrichment=None) for f in result.findings]
outcome = enrich_shown(Corpus(Path(root)), plain, EnrichSettings(use_store=False))
print(json.dumps([{"language": h.language, "stages": h.stages_ms} for h in outcome.per_hit]))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-q", "--query", action="append", help="query (repeatable)")
    parser.add_argument("--root", default=stdlib_dir())
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--hits", type=int, nargs="+", metavar="N", help="see above")
    parser.add_argument("extra", nargs="*", help="extra cq arguments, after --")
    args = parser.parse_args()
    extra = args.extra or ["--exclude", "site-packages/**"]
    print(f"corpus: {args.root}  runs: {args.runs}  cq extra args: {extra}")
    if args.hits:
        for query in args.query or ["get"]:
            bound(query, args.root, args.hits, extra)
        return
    for query in args.query or ["register", "__init__"]:
        print(f"\n## {query}")
        wall(query, args.root, args.runs, extra)
        size(query, args.root, extra)
        stages(query, args.root, extra)


_BOUND_SCRIPT = """
import json, sys, time
from pathlib import Path
import msgspec
from cq.enrich import EnrichSettings, enrich_shown
from cq.model import SearchRequest
from cq.model.tuning import EnrichTuning
from cq.parse import Corpus
from cq.pipeline import run_search
root, query, counts, exclude = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4:]
request = SearchRequest(
    query=query, root=root, exclude=tuple(exclude), limit=0, use_cache=False, semantic=False
)
plain = [msgspec.structs.replace(f, enrichment=None) for f in run_search(request).findings]
unbounded = EnrichSettings(use_store=False, tuning=EnrichTuning(max_hits=10**9))
enrich_shown(Corpus(Path(root)), plain[:1], unbounded)  # imports (libcst) out of the figures
for n in counts:
    wall, cpu = time.perf_counter(), time.process_time()
    enrich_shown(Corpus(Path(root)), plain[:n], unbounded)
    print(f"{n} of {len(plain)} hits: wall {time.perf_counter() - wall:.2f} s,"
          f" CPU {time.process_time() - cpu:.2f} s")
"""


def bound(query: str, root: str, counts: list[int], extra: list[str]) -> None:
    exclude = [extra[i + 1] for i, arg in enumerate(extra[:-1]) if arg == "--exclude"]
    print(f"\n# {query}: enriching the first N ranked hits, cold; load {os.getloadavg()[0]:.1f}")
    argv = [sys.executable, "-c", _BOUND_SCRIPT, root, query, json.dumps(counts), *exclude]
    subprocess.run(argv, check=True)


def wall(query: str, root: str, runs: int, extra: list[str]) -> None:
    argv = [*cq_command(), "search", query, "--root", root, "--format", "json", *extra]
    for mode in ("warm", "cold"):
        on, off, inner = [], [], []
        with scratch_dir() as warm_cache:
            if mode == "warm":
                time_command(argv, env={"CQ_CACHE_DIR": warm_cache})
            for _ in range(runs):
                for enabled in (True, False):
                    with scratch_dir() as cold_cache:
                        env = {"CQ_CACHE_DIR": warm_cache if mode == "warm" else cold_cache}
                        if not enabled:
                            env["CQ_ENRICH_BUDGET_MS"] = "0"
                        run = time_command(argv, env=env)
                    (on if enabled else off).append(run.seconds)
                    if enabled:
                        inner.append(json.loads(run.stdout)["run"]["timings_ms"]["enrich"])
        print(
            f"{mode}: with enrichment {median(on):.3f} s, without {median(off):.3f} s, "
            f"adds {median(on) - median(off):+.3f} s; cq's own enrich step {median(inner):.1f} ms"
        )


def size(query: str, root: str, extra: list[str]) -> None:
    argv = [*cq_command(), "search", query, "--root", root, "--format", "json", *extra]
    with scratch_dir() as cache:
        out = time_command(argv, env={"CQ_CACHE_DIR": cache}).stdout
    data = json.loads(out)
    payloads = [
        len(json.dumps(f["enrichment"], separators=(",", ":")))
        for f in data["findings"]
        if f.get("enrichment")
    ]
    print(
        f"json: {len(out)} bytes for {len(data['findings'])} findings; enrichment payload "
        f"max {max(payloads, default=0)} B, median {median(payloads):.0f} B (compact JSON)"
    )
    print(f"telemetry: {data['summary']['telemetry']}")


def stages(query: str, root: str, extra: list[str]) -> None:
    excludes = [extra[i + 1] for i, a in enumerate(extra) if a == "--exclude"]
    with scratch_dir() as cache:
        proc = subprocess.run(
            [sys.executable, "-c", _STAGES_SCRIPT, root, query, *excludes],
            capture_output=True,
            text=True,
            check=True,
            # the search itself must not enrich, or the measured pass would hit warm caches
            env={"CQ_CACHE_DIR": cache, "PATH": "", "CQ_ENRICH_BUDGET_MS": "0"},
        )
    hits = json.loads(proc.stdout)
    names = sorted({s for h in hits for s in h["stages"]})
    print(f"per-hit stage ms over {len(hits)} hits (fresh process, first-use imports included):")
    for name in [*names, "total"]:
        values = [
            sum(h["stages"].values()) if name == "total" else h["stages"][name]
            for h in hits
            if name == "total" or name in h["stages"]
        ]
        p95 = statistics.quantiles(values, n=20)[-1] if len(values) >= 2 else values[0]
        print(f"  {name:<12} median {median(values):7.2f}  p95 {p95:7.2f}  max {max(values):7.2f}")


if __name__ == "__main__":
    main()
