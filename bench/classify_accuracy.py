"""Classification accuracy of ``cq search`` against an independent ``ast`` + ``tokenize`` oracle.

Labels every whole-word occurrence of a fixed, deterministic sample of identifiers (common
and rare; defs, calls, attributes, imports, params, annotations, words in strings, comments
and docstrings) in the real Python files of the standard library (site-packages excluded)
with ``python_oracle.py``, runs ``cq search ID --format json --limit 0`` for each, matches
findings to labels by (file, line, col) and prints the confusion (oracle -> cq), per-category
and overall agreement, and coverage (occurrences cq missed, findings the oracle lacks).

    python -m bench.classify_accuracy                 # the default sample, stdlib
    python -m bench.classify_accuracy -q name -q cls --examples 5
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tokenize
from collections import Counter, defaultdict
from pathlib import Path

from bench._common import cq_command, stdlib_dir
from bench.python_oracle import FileLabels, label_file

# Deterministic mix: builtins and methods called everywhere, names defined once, attributes,
# module names imported, parameters, typing names in annotations, words of prose.
SAMPLE = (
    # defined and called
    "register", "encode", "decode", "compile", "join", "split", "startswith", "format",
    "isinstance", "getattr", "setattr", "close", "append", "items", "get",
    # parameters, locals, attributes
    "cls", "name", "value", "path", "data", "result", "kwargs", "key", "other", "node",
    "msg", "flags", "encoding", "errors",
    # rare definitions and decorators
    "dataclass", "lru_cache", "namedtuple", "abstractmethod", "contextmanager", "wraps",
    "partial", "deque", "defaultdict", "OrderedDict", "ABCMeta",
    # exceptions, modules
    "NotImplementedError", "TypeError", "warnings", "functools", "os",
    # match-statement captures (test_patma.py), ``**rest``
    "y", "z", "rest",
    # annotations
    "Optional", "Any", "Iterator", "str",
    # prose in docstrings, strings and comments
    "Return", "TODO", "XXX", "default",
)  # fmt: skip
CATEGORIES = (
    "definition", "callsite", "import", "from_import", "assignment", "reference",
    "annotation", "docstring_match", "string_match", "comment_match",
)  # fmt: skip


def python_files(root: Path) -> list[Path]:
    """The files cq searches as Python, minus site-packages (cq gets the same exclude)."""
    found = [
        p
        for p in root.rglob("*")
        if p.suffix in (".py", ".pyi") and "site-packages" not in p.relative_to(root).parts
    ]
    return sorted(p for p in found if p.is_file())


def oracle_labels(root: Path, wanted: set[str]) -> tuple[dict[str, FileLabels], list[str]]:
    """Labels per relative path; the files the oracle cannot read or parse."""
    out: dict[str, FileLabels] = {}
    skipped: list[str] = []
    for path in python_files(root):
        rel = path.relative_to(root).as_posix()
        raw = path.read_bytes()
        if not any(w.encode() in raw for w in wanted):
            continue
        try:
            with tokenize.open(path) as fh:
                source = fh.read()
        except (SyntaxError, UnicodeDecodeError, LookupError):
            skipped.append(rel)
            continue
        labels = label_file(source, wanted)
        if labels is None:
            skipped.append(rel)
        elif labels.words:
            out[rel] = labels
    return out, skipped


def cq_findings(root: Path, query: str, extra: list[str]) -> list[dict]:
    argv = [
        *cq_command(),
        "search",
        query,
        "--root",
        str(root),
        "--exclude",
        "site-packages/**",
        "--profile",
        "audit",
        "--format",
        "json",
        "--limit",
        "0",
        "--no-rewrite",
        "--identifier",
        "--lang",
        "python",
        "--no-cache",
        "--max-matches-per-file",
        "100000",  # the audit profile's 1000 per file would truncate test_os.py's ``os``
        *extra,
    ]
    env = {**os.environ, "CQ_ENRICH_BUDGET_MS": "0"}  # enrichment does not change categories
    proc = subprocess.run(argv, capture_output=True, env=env, check=False)
    if proc.returncode != 0:
        sys.exit(f"cq failed for {query!r}: {proc.stderr.decode(errors='replace').strip()}")
    return json.loads(proc.stdout)["findings"]


@dataclasses.dataclass
class Comparison:
    """cq's categories against the oracle's, over a set of identifiers."""

    confusion: dict[str, Counter[str]] = dataclasses.field(
        default_factory=lambda: defaultdict(Counter)
    )
    examples: dict[tuple[str, str], list[str]] = dataclasses.field(
        default_factory=lambda: defaultdict(list)
    )
    missed: list[str] = dataclasses.field(default_factory=list)
    extra_found: list[str] = dataclasses.field(default_factory=list)
    per_query: list[tuple[str, int, int]] = dataclasses.field(default_factory=list)
    skipped: list[str] = dataclasses.field(default_factory=list)
    unsure: int = 0
    in_skipped: int = 0

    def agreement(self) -> tuple[int, int]:
        """Occurrences where cq and the oracle agree, of those compared."""
        return sum(a for _, a, _ in self.per_query), sum(t for _, _, t in self.per_query)


def compare(root: Path, queries: list[str], extra: list[str]) -> Comparison:
    """Run cq for each identifier and match its findings to the oracle's labels."""
    labels, skipped = oracle_labels(root, set(queries))
    out = Comparison(skipped=skipped)
    for query in queries:
        seen: set[tuple[str, int, int]] = set()
        agree = total = 0
        for f in cq_findings(root, query, extra):
            key = (f["file"], f["line"], f["col"])
            seen.add(key)
            file_labels = labels.get(f["file"])
            where = f"{f['file']}:{f['line']}:{f['col']} {f['line_text'].strip()[:90]}"
            if f["file"] in skipped:
                out.in_skipped += 1
                continue
            pos = (f["line"], f["col"])
            if file_labels is not None and pos in file_labels.unsure:
                out.unsure += 1
                continue
            expected = file_labels.labels.get(pos) if file_labels else None
            if expected is None:
                out.extra_found.append(f"{query}: {where} -> {f['category']}")
                continue
            out.confusion[expected][f["category"]] += 1
            total += 1
            agree += expected == f["category"]
            if expected != f["category"] and len(out.examples[expected, f["category"]]) < 50:
                out.examples[expected, f["category"]].append(f"{query}: {where} [{f['tier']}]")
        for rel, file_labels in labels.items():
            for pos, word in file_labels.words.items():
                if word == query and pos in file_labels.labels and (rel, *pos) not in seen:
                    label = file_labels.labels[pos]
                    out.missed.append(f"{query}: {rel}:{pos[0]}:{pos[1]} ({label})")
        out.per_query.append((query, agree, total))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-q", "--query", action="append", help="identifier (repeatable)")
    parser.add_argument("--root", default=stdlib_dir())
    parser.add_argument("--examples", type=int, default=3, help="examples per disagreement")
    parser.add_argument("extra", nargs="*", help="extra cq arguments (after --)")
    args = parser.parse_args()
    root = Path(args.root).resolve()
    got = compare(root, args.query or list(SAMPLE), args.extra)
    report(got.confusion, got.examples, args.examples, got.per_query)
    print(f"\nfiles the oracle cannot parse (excluded): {len(got.skipped)}; cq findings there: "
          f"{got.in_skipped}; oracle-unsure positions cq reported: {got.unsure}")  # fmt: skip
    print(f"coverage: occurrences cq missed {len(got.missed)}; cq findings the oracle lacks "
          f"{len(got.extra_found)}")  # fmt: skip
    for line in got.missed[: args.examples * 3]:
        print(f"  missed  {line}")
    for line in got.extra_found[: args.examples * 3]:
        print(f"  extra   {line}")


def report(confusion, examples, n_examples: int, per_query) -> None:
    cats = [c for c in CATEGORIES if confusion.get(c)]
    cq_cats = sorted({c for row in confusion.values() for c in row})
    print(f"identifiers: {len(per_query)}; occurrences compared: "
          f"{sum(t for _, _, t in per_query)}\n")  # fmt: skip
    print("| oracle \\ cq | n | agree | " + " | ".join(cq_cats) + " |")
    print("|---|---|---|" + "---|" * len(cq_cats))
    agree_all = total_all = 0
    for cat in cats:
        row = confusion[cat]
        n = sum(row.values())
        agree_all += row[cat]
        total_all += n
        cells = " | ".join(str(row.get(c, "")) for c in cq_cats)
        print(f"| {cat} | {n} | {100 * row[cat] / n:.2f}% | {cells} |")
    print(f"\noverall agreement: {agree_all}/{total_all} = {100 * agree_all / total_all:.2f}%")
    worst = sorted(per_query, key=lambda q: q[1] / q[2] if q[2] else 1)[:8]
    print("lowest per identifier: " + ", ".join(
        f"{q} {100 * a / t:.1f}% of {t}" for q, a, t in worst if t))  # fmt: skip
    for (expected, got), lines in sorted(examples.items(), key=lambda kv: -len(kv[1])):
        print(f"\n{expected} -> {got}: {confusion[expected][got]}")
        for line in lines[:n_examples]:
            print(f"  {line}")


if __name__ == "__main__":
    main()
