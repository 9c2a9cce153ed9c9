"""Every audit hit's verdict from the workers' analyses, to compare two checkouts.

A change to how files are cut and parsed (``cq/classify/slices.py``, ``analyze.py``) may change
the records while every verdict must stay: this builds ``bench/studies/audit_analysis.py``'s
tasks (each distinct matched file's bytes and hit spans), runs ``analyze_file`` on each, and
classifies every hit from the records as the engine does (``classify_from_records``; the
node tier is not run: it parses the whole file either way). ``--out`` writes one line per
hit (file, offset, the ``Classification`` as JSON); ``--compare`` counts the lines that
differ. Run it once per checkout, from that checkout's directory:

    python -m bench.studies.audit_verdicts --root /tmp/audit-tree --out after.jsonl
    cd /tmp/cq-base && python -m bench.studies.audit_verdicts --root /tmp/audit-tree \
        --out before.jsonl
    python -m bench.studies.audit_verdicts --compare before.jsonl after.jsonl
"""

from __future__ import annotations

import argparse
import sys
import time

import msgspec


def collect(root: str, query: str, max_filesize: int, out: str) -> None:
    from bench.studies.audit_analysis import tasks_of
    from cq.classify.analyze import analyze_file
    from cq.classify.lookup import classify_from_records
    from cq.classify.records import FileRecords
    from cq.model.tuning import Tuning

    tuning = Tuning()
    caps = tuning.parse
    tasks = tasks_of(root, query, max_filesize)
    started = time.process_time()
    lines: list[bytes] = []
    for task in tasks:
        analysis = analyze_file(task, caps)
        if analysis.sliced is not None:
            records = FileRecords.from_stored(analysis.sliced.records)
            shifts = analysis.sliced.shifts
        else:
            records = FileRecords.from_stored(analysis.records)  # type: ignore[arg-type]
            shifts = [0] * len(task.hits)
        for (start, end), shift in zip(task.hits, shifts, strict=True):
            text = task.data[start:end].decode("utf-8", "replace")
            verdict = None
            if records.reason is None:
                verdict = classify_from_records(
                    records, start - shift, end - shift, text, tuning.classify
                )
            lines.append(msgspec.json.encode([task.rel, start, verdict, records.reason]))
    with open(out, "wb") as fh:
        fh.write(b"\n".join(lines) + b"\n")
    print(f"{len(tasks)} analyses, {len(lines)} hits, {time.process_time() - started:.2f} CPU-s")


def compare(before: str, after: str) -> int:
    with open(before, "rb") as a, open(after, "rb") as b:
        old, new = a.read().splitlines(), b.read().splitlines()
    differ = [(x, y) for x, y in zip(old, new, strict=False) if x != y]
    print(f"{len(old)} hits before, {len(new)} after, {len(differ)} differ")
    for x, y in differ[:10]:
        print(f"  {x.decode()}\n  {y.decode()}")
    return 0 if not differ and len(old) == len(new) else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", help="the tree to search")
    parser.add_argument("-q", "--query", default="get")
    parser.add_argument("--max-filesize", type=int, default=2097152, help="the audit profile's")
    parser.add_argument("--out", help="write the verdicts here")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    if not (args.root and args.out):
        parser.error("--root and --out, or --compare")
    collect(args.root, args.query, args.max_filesize, args.out)


if __name__ == "__main__":
    main()
