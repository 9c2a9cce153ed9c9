"""Sliced parsing vs whole-file parsing: does every hit get the same verdict?

A cold search parses a Python file as slices (the statements around its hits) when the hits
sit in a small part of it. This checks that shortcut on real code: for every Python file
under ``--root`` (default: the stdlib, site-packages included: more code nobody here wrote)
and a deterministic sample of the words in it, it plans slices for the word's whole-word
occurrences exactly as a search would, parses them, and compares each hit's category and
scope with what the whole file's records say. It also counts plans, slices that did not
parse together (those files fall back to a whole-file parse: slower, never wrong) and the share of
bytes parsed. Files whose whole parse has errors are skipped: tree-sitter's recovery there is
no reference (a slice of such a file is often the cleaner parse).

    python -m bench.studies.slice_agreement                     # stdlib, 6 words a file
    python -m bench.studies.slice_agreement --root DIR --words 20 --examples 10
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from collections import Counter
from pathlib import Path

from bench._common import stdlib_dir
from cq.classify.analyze import FileTask, analyze_file, sliced_records
from cq.classify.lookup import classify_from_records
from cq.classify.records import FileRecords
from cq.classify.slices import python_slices
from cq.model.tuning import ClassifyTuning, ParseTuning

_CAPS = ParseTuning()
_CLASSIFY = ClassifyTuning()

_WORD = re.compile(rb"\b[A-Za-z_][A-Za-z0-9_]*\b")


def sample_words(data: bytes, count: int) -> list[bytes]:
    """``count`` distinct words of the file, chosen by a hash (stable across runs)."""
    words = sorted(set(_WORD.findall(data)))
    words.sort(key=lambda w: hashlib.blake2b(w, digest_size=4).digest())
    return words[:count]


def verdict(
    records: FileRecords, start: int, end: int, text: str, shift: int = 0
) -> tuple[str, str | None]:
    """Category and scope of a hit (``shift``: what its offsets lose to land in records of
    a sliced text)."""
    start, end = start - shift, end - shift
    found = classify_from_records(records, start, end, text, _CLASSIFY)
    if found is None:
        return ("(node tier)", records.scope_at(start))
    return (found.category, found.containing_scope)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=stdlib_dir())
    parser.add_argument("--words", type=int, default=6, help="words sampled per file")
    parser.add_argument("--examples", type=int, default=5, help="disagreements to print")
    args = parser.parse_args()
    root = Path(args.root)
    stats: Counter[str] = Counter()
    examples: list[str] = []
    failures: list[str] = []
    for path in sorted(p for p in root.rglob("*.py") if p.is_file()):
        data = path.read_bytes()
        stats["files"] += 1
        whole = analyze_file(FileTask(str(path), "python", data), _CAPS).records
        if whole.reason is not None or whole.error_nodes:
            stats["files_with_errors"] += 1  # no reference: the whole parse recovered
            continue
        full = FileRecords.from_stored(whole)
        for word in sample_words(data, args.words):
            hits = [m.span() for m in re.finditer(rb"\b" + word + rb"\b", data)]
            plan = python_slices(data, hits, _CAPS)
            stats["queries"] += 1
            if plan is None:
                continue
            stats["plans"] += 1
            stats["bytes_whole"] += len(data)
            stats["bytes_sliced"] += sum(s.end - s.start for s in plan.slices)
            sliced = sliced_records("python", data, plan, hits, _CAPS)
            if sliced is None:
                stats["plans_failed"] += 1
                line = data.count(b"\n", 0, plan.slices[0].start) + 1
                failures.append(f"{path}:{line} {word.decode()}: the slices do not parse")
                continue
            loaded = FileRecords.from_stored(sliced.records)
            for (start, end), shift in zip(hits, sliced.shifts, strict=True):
                text = data[start:end].decode()
                stats["hits"] += 1
                expected = verdict(full, start, end, text)
                got = verdict(loaded, start, end, text, shift)
                if expected == got:
                    stats["agree"] += 1
                elif len(examples) < args.examples:
                    line = data.count(b"\n", 0, start) + 1
                    examples.append(f"{path}:{line} {word.decode()}: whole {expected} sliced {got}")
    hits, agree = stats["hits"], stats["agree"]
    print(
        f"files {stats['files']} (skipped, no clean whole parse to compare with: "
        f"{stats['files_with_errors']}), word queries {stats['queries']}, sliced {stats['plans']}"
    )
    print(f"plans with a slice that did not parse (whole-file fallback): {stats['plans_failed']}")
    if stats["bytes_whole"]:
        share = stats["bytes_sliced"] / stats["bytes_whole"]
        print(f"bytes parsed by sliced plans: {share:.1%} of their files")
    print(f"hits compared {hits}, same category and scope {agree} ({agree / max(hits, 1):.4%})")
    for line in examples + failures[: args.examples]:
        print("  " + line)
    sys.exit(0 if agree == hits else 1)


if __name__ == "__main__":
    main()
