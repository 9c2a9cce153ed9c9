"""Report size and answer rank of ``cq search`` for identifier queries on the stdlib directory.

For each query: the default markdown report's line count, and the 1-based rank of the first
definition of the queried name among all findings (it should be 1 whenever one exists).
Prints one row per query, then the median and max line counts and how many queries had their
definition first.

    python -m bench.studies.report_size -- --exclude 'site-packages/**'
    python -m bench.studies.report_size -q register -q urlopen -- --exclude 'site-packages/**'
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess

from bench._common import cq_command, stdlib_dir

QUERIES = (
    "register",
    "urlopen",
    "namedtuple",
    "dataclass",
    "getLogger",
    "OrderedDict",
    "deepcopy",
    "TemporaryDirectory",
    "ThreadPoolExecutor",
    "literal_eval",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-q", "--query", action="append", help="query (repeatable)")
    parser.add_argument("--root", default=stdlib_dir())
    parser.add_argument("extra", nargs="*", help="extra cq arguments, after --")
    args = parser.parse_args()
    queries = args.query or list(QUERIES)
    print(f"corpus: {args.root}  cq extra args: {args.extra}")
    print(f"{'query':<20}{'md lines':>9}{'findings':>10}{'def rank':>10}  top finding")
    sizes, firsts, with_def = [], 0, 0
    for query in queries:
        lines, total, rank, top = measure(query, args.root, args.extra)
        sizes.append(lines)
        with_def += rank is not None
        firsts += rank == 1
        shown = "-" if rank is None else str(rank)
        print(f"{query:<20}{lines:>9}{total:>10}{shown:>10}  {top}")
    print(
        f"markdown lines: median {statistics.median(sizes):g}, max {max(sizes)}; "
        f"definition ranked 1st for {firsts} of {with_def} queries that have one "
        f"({len(queries)} queries)"
    )


def measure(query: str, root: str, extra: list[str]) -> tuple[int, int, int | None, str]:
    """Markdown lines (default flags), total findings, rank of the first definition, top hit."""
    base = [*cq_command(), "search", query, "--root", root, *extra]
    markdown = _run([*base, "--format", "md"])
    data = json.loads(_run([*base, "--format", "json", "--limit", "0"]))
    findings = data["findings"]
    rank = next(
        (
            i
            for i, f in enumerate(findings, 1)
            if f["category"] == "definition" and _name(f) == query
        ),
        None,
    )
    top = (
        f"{findings[0]['file']}:{findings[0]['line']} {findings[0]['category']}" if findings else ""
    )
    return markdown.count("\n"), data["summary"]["total_findings"], rank, top


def _name(finding: dict) -> str:
    return re.split(r"\.|::", finding["text"])[-1]


def _run(argv: list[str]) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{argv}: exit {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


if __name__ == "__main__":
    main()
