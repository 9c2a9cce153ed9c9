"""Agreement and degradation over every hit of some queries: a robustness sweep.

Enriches all hits (no limit, no time budget, no LibCST quota, nothing stored) of each query
on the stdlib and counts statuses, agreement (full/partial/conflict), conflicting fields and
degrade reasons, with one example location each. A conflict is a place where ast-grep,
LibCST and tree-sitter read the same code differently: a parser quirk or a bug in a stage.

    python -m bench.studies.enrich_agreement -q name -q cls --max-matches 1500
"""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter
from pathlib import Path

from bench._common import stdlib_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-q", "--query", action="append", help="query (repeatable)")
    parser.add_argument("--root", default=stdlib_dir())
    parser.add_argument("--max-matches", type=int, default=1500, help="per query")
    args = parser.parse_args()
    os.environ["CQ_ENRICH_BUDGET_MS"] = "0"  # the search itself enriches nothing

    import msgspec

    from cq.enrich import EnrichSettings, enrich_shown
    from cq.model import Limits, SearchRequest
    from cq.parse import Corpus
    from cq.pipeline import run_search

    statuses: Counter[str] = Counter()
    agreement: Counter[str] = Counter()
    problems: Counter[str] = Counter()
    examples: dict[str, str] = {}
    started, hits = time.perf_counter(), 0
    for query in args.query or ["register", "self", "name", "cls"]:
        request = SearchRequest(
            query=query,
            root=args.root,
            exclude=("site-packages/**",),
            limit=0,
            use_cache=False,
            limits=Limits(max_total_matches=args.max_matches),
        )
        plain = [msgspec.structs.replace(f, enrichment=None) for f in run_search(request).findings]
        settings = EnrichSettings(use_store=False, budget_ms=float("inf"), libcst_hits=10**9)
        for finding in enrich_shown(Corpus(Path(args.root)), plain, settings).findings:
            e = finding.enrichment
            if e is None:
                continue
            hits += 1
            statuses[e.status] += 1
            if e.agreement is not None:
                agreement[e.agreement.status] += 1
            for problem in [*e.agreement.conflicts] if e.agreement else []:
                problems[problem] += 1
                examples.setdefault(problem, f"{finding.file}:{finding.line}")
            for reason in e.degrade_reasons:
                key = ":".join(reason.split(":")[:2])
                problems[key] += 1
                examples.setdefault(key, f"{finding.file}:{finding.line}  {reason}")
    print(f"{hits} hits in {time.perf_counter() - started:.1f} s")
    print(f"status: {dict(statuses)}")
    print(f"agreement: {dict(agreement)}")
    for problem, count in problems.most_common():
        print(f"  {count:>5}  {problem}  e.g. {examples[problem]}")


if __name__ == "__main__":
    main()
