"""Dotted queries and callers questions: does the answer lead, and do resolved uses come first?

Per tree (the stdlib without site-packages, plus any ``--tree NAME=DIR``), per query, on a
warm server as in ``cq mcp`` (``semantic_cost.warm``: the tree indexed, the query answered
once unbudgeted, the answer cache off after that):

- a dotted query (``ABCMeta.register``): the place of its target definition (a definition
  whose qualified name ends with the query, ``cq.rank.dotted``) in the shown findings, with
  the stage on (budgeted, and unbudgeted: every answer in) and off (``--no-semantic``: the
  syntax order alone); of the shown same-named uses, how many resolved to the target and
  elsewhere (``summary.telemetry.semantic_target``), whether the order holds (every use
  resolved to the target before every unresolved one, before every one resolved elsewhere),
  and, with the stage off, how many shown uses have a receiver naming the owner;
- a callers question (``who calls X``): the first finding, and how many shown callsites
  resolved to the definition.

    python -m bench.studies.dotted_rank
    python -m bench.studies.dotted_rank --no-stdlib \\
        --tree marshmallow=$CQ_BENCH_TREES/marshmallow \\
        --tree saleor=$CQ_BENCH_TREES/saleor
"""

from __future__ import annotations

import argparse
import itertools

import msgspec

from bench._common import stdlib_dir
from bench.semantic_cost import STDLIB_EXCLUDE, count_py, load, unbudgeted, warm
from cq.candidates import dotted_parts
from cq.model import Finding, SearchRequest, SearchResult
from cq.pipeline import run_search
from cq.rank import Dotted, is_plausible_use, is_target_definition, last_name
from cq.semantic import keep_servers_warm
from cq.semantic.pool import pool

QUERIES = {
    "stdlib": (
        "ABCMeta.register",
        "Logger.setLevel",
        "logging.getLogger",
        "who calls literal_eval",
    ),
    "marshmallow": ("Schema.load", "Field.deserialize", "who calls get_value"),
    "saleor": (
        "ApiClient.post_graphql",
        "ModelWithMetadata.store_value_in_metadata",
        "BaseMutation.call_event",
        "who calls fetch_checkout_info",
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--no-stdlib", action="store_true", help="only the --tree trees")
    args = parser.parse_args()
    keep_servers_warm()
    trees = [] if args.no_stdlib else [("stdlib", stdlib_dir(), STDLIB_EXCLUDE)]
    trees += [(n, d, ()) for n, d in (t.split("=", 1) for t in args.tree)]
    for name, root, exclude in trees:
        print(f"\n# {name}: {root} ({count_py(root, exclude)} .py files); {load()}")
        print("query | stage | target at | resolved to target / uses, elsewhere | order holds")
        for query in QUERIES.get(name, ()):
            request = SearchRequest(query=query, root=root, exclude=exclude)
            full = warm(request, root)
            budgeted = run_search(request)
            off = run_search(msgspec.structs.replace(request, semantic=False))
            for label, result in (("budgeted", budgeted), ("unbudgeted", full), ("off", off)):
                print(f"{query} | {label} | {describe(result)}")
        with unbudgeted():
            pool().stop_all()
        print(f"end of {name}: {load()}")


def describe(result: SearchResult) -> str:
    findings = result.findings
    target = msgspec.to_builtins(result.summary.telemetry).get("semantic.target", {})
    parts = dotted_parts(result.summary.query)
    dotted = Dotted(parts) if parts else None
    if dotted is None:  # a callers question
        first = findings[0] if findings else None
        where = f"{first.category} {first.file}:{first.line}" if first else "nothing"
        return f"first: {where} | {target.get('resolved_to_target', 0)} callsites resolved"
    at = next((i for i, f in enumerate(findings) if is_target_definition(f, dotted)), None)
    place = "none" if at is None else f"#{at + 1} {findings[at].file}:{findings[at].line}"
    uses = [
        f for f in findings if f.category != "definition" and last_name(f.text) == dotted.member
    ]
    plausible = sum(1 for f in uses if is_plausible_use(f, dotted))
    counts = (
        f"{target.get('resolved_to_target', 0)}/{target.get('uses', len(uses))},"
        f" {target.get('resolved_elsewhere', 0)}"
        if target
        else f"- ({plausible} of {len(uses)} uses with a receiver naming the owner)"
    )
    return f"{place} | {counts} | {order_holds(findings, dotted.member, target)}"


def order_holds(findings: list[Finding], member: str, target: dict[str, int]) -> str:
    """Uses resolved to the target (those the telemetry counts, the first after the
    definition), then unresolved ones, then those resolved elsewhere."""
    if not target:
        return "-"
    ranks = []
    for f in findings:
        if f.category == "definition" or last_name(f.text) != member:
            continue
        semantic = f.enrichment.semantic if f.enrichment else None
        ranks.append(0 if semantic is None or semantic.definition is None else 1)
    mine = target.get("resolved_to_target", 0)
    lead, rest = ranks[:mine], ranks[mine:]
    # after the resolved block, those resolved elsewhere (1) come after every unresolved one (0)
    holds = all(lead) and all(a <= b for a, b in itertools.pairwise(rest))
    return "yes" if holds else "no"


if __name__ == "__main__":
    main()
