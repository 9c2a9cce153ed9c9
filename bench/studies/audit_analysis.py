"""What a pool worker's analyses of an audit search cost, stage by stage, in one process.

The audit's workers run ``cq.classify.analyze.analyze_file`` on every file to parse; their CPU
is most of the search's and lives in other processes, where a profiler of the CLI does not
see it. This builds the same tasks offline (each matched file's bytes as cq reads them and its
hit spans, from ``rg --json -w``; files with the same bytes and hits once, as cq parses them
once), then times, each alone over all tasks: the slice planner's scan (the strings that span
lines, the top-level statement lines), the whole planning, tree-sitter's parses of what the
plans cut, the records built from the trees, and ``analyze_file`` end to end. CPU seconds of
this process; report the load (printed).

It also prints a digest of every analysis with node kinds written as names: a build numbers
kinds in the order it meets them, and that order is not the same from run to run, so raw
bytes differ where the records do not. A change to the analysis that must not change it keeps
the digest.

    python -m bench.studies.audit_analysis --root /tmp/audit-tree
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import msgspec

from bench._common import rg_binary
from cq.classify.analyze import (
    FileAnalysis,
    FileTask,
    _build,
    _parse,
    analyze_file,
    planned,
    sliced_text,
)
from cq.classify.records import _INT_FIELDS, FileRecords, StoredRecords
from cq.classify.slices import _Scan
from cq.model.tuning import Tuning
from cq.parse.source import searched_bytes


def tasks_of(root: str, query: str, max_filesize: int) -> list[FileTask]:
    """The analyses an audit search of ``query`` hands its workers, distinct ones once."""
    argv = [rg_binary(), "--json", "-w", "-e", query, "--type", "py"]
    argv += ["--max-filesize", str(max_filesize), "."]
    out = subprocess.run(argv, cwd=root, capture_output=True, check=False).stdout
    spans: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for line in out.splitlines():
        event = msgspec.json.decode(line)
        if event["type"] != "match" or "text" not in event["data"]["path"]:
            continue
        data = event["data"]
        for sub in data["submatches"]:
            at = data["absolute_offset"]
            spans[data["path"]["text"].removeprefix("./")].append(
                (at + sub["start"], at + sub["end"])
            )
    tasks: dict[tuple[bytes, tuple[tuple[int, int], ...]], FileTask] = {}
    for rel, hits in sorted(spans.items()):
        with open(os.path.join(root, rel), "rb") as fh:
            data = searched_bytes(fh.read())
        tasks.setdefault(
            (hashlib.blake2b(data).digest(), tuple(hits)), FileTask(rel, "python", data, hits)
        )
    return list(tasks.values())


def digest(analyses: list[FileAnalysis]) -> str:
    """Over every analysis, node kinds as names (see the module docstring)."""

    def records(stored: StoredRecords) -> list[Any]:
        loaded = FileRecords.from_stored(stored)
        row: list[Any] = [loaded.language, loaded.reason, loaded.scope_names, loaded.error_nodes]
        for name in _INT_FIELDS:
            values = list(getattr(loaded, name))
            if name in ("token_kinds", "seg_kinds"):
                values = [loaded.kinds[k] if k >= 0 else None for k in values]
            row.append(values)
        return row

    rows = [
        [a.sliced.shifts, records(a.sliced.records)] if a.sliced is not None else records(a.records)  # type: ignore[arg-type]
        for a in analyses
    ]
    return hashlib.sha256(msgspec.json.encode(rows)).hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("-q", "--query", default="get")
    parser.add_argument("--max-filesize", type=int, default=2097152, help="the audit profile's")
    args = parser.parse_args()
    caps = Tuning().parse
    tasks = tasks_of(args.root, args.query, args.max_filesize)
    size = sum(len(t.data) for t in tasks)
    print(f"load {os.getloadavg()[0]:.1f}; {len(tasks)} distinct tasks, {size / 1e6:.1f} MB")

    def stage(name: str, work: Callable[[], Any]) -> Any:
        started = time.process_time()
        result = work()
        print(f"{name:<22}{time.process_time() - started:7.2f} CPU-s")
        return result

    stage("scan", lambda: [_Scan(t.data) for t in tasks])
    plans = stage("planning (with scan)", lambda: [planned(t, caps) for t in tasks])
    pieces: list[tuple[bytes, list[tuple[int, int]] | None]] = []
    for task in plans:
        if task.plan is None:
            pieces.append((task.data, None))
            continue
        text, _, shifts = sliced_text(task.data, task.plan)
        spans = task.plan.hit_spans(task.hits)
        pieces.append((text, [(a - s, b - s) for (a, b), s in zip(spans, shifts, strict=True)]))
    slices = sum(len(t.plan.slices) for t in plans if t.plan is not None)
    print(f"{len(pieces)} parses ({slices} slices), {sum(len(p) for p, _ in pieces) / 1e6:.1f} MB")
    trees = stage("parse", lambda: [_parse("python", p) for p, _ in pieces])
    pairs = list(zip(trees, [w for _, w in pieces], strict=True))
    stage("records", lambda: [_build("python", tree, caps, w) for tree, w in pairs])
    analyses = stage("analyze_file", lambda: [analyze_file(t, caps) for t in tasks])
    print(f"digest {digest(analyses)}")


if __name__ == "__main__":
    main()
