"""Stage 4's skeletons against whole files: do LibCST's facts agree, and what do they cost?

For every word hit of each query (a sample of ``--per-query`` hits, the same each run) in the
Python files of a tree, LibCST's facts (construct, scopes, call, qualified names, bindings,
import alias chain) are taken once from the hit's skeleton (``cq.enrich.skeleton``) and once
from the whole file given as its own skeleton. Prints the share of hits whose facts agree,
field by field, with an example of each disagreement, and the skeletons' bytes and LibCST
seconds beside the files'. Files over ``--max-file-kb`` are left out (a whole file costs
~1 s per thousand lines).

    python -m bench.studies.skeleton_agreement --root /work/trees/head/moto
    python -m bench.studies.skeleton_agreement -q TextIOWrapper -q Path -q register
"""

from __future__ import annotations

import argparse
import ast
import random
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from bench._common import rg_binary, stdlib_dir

QUERIES = ("self", "name", "get", "data", "value", "result", "key", "e", "os", "cls")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=stdlib_dir())
    parser.add_argument("-q", "--query", action="append", help="query (repeatable)")
    parser.add_argument("--per-query", type=int, default=150)
    parser.add_argument("--max-file-kb", type=int, default=120)
    args = parser.parse_args()

    from cq.enrich.py_libcst_stage import libcst_facts, skeleton_facts
    from cq.enrich.skeleton import Skeleton

    root = Path(args.root)
    agree: Counter[str] = Counter()
    examples: dict[str, str] = {}
    hits = skeleton_bytes = file_bytes = 0
    skeleton_s = file_s = 0.0
    parsed: dict[str, tuple[list[str], ast.Module] | None] = {}
    for query in args.query or QUERIES:
        for path, line, col in _sample(root, query, args.per_query):
            if path not in parsed:
                parsed[path] = _parse(root / path, args.max_file_kb * 1024)
            found = parsed[path]
            if found is None:
                continue
            lines, tree = found
            col = len(lines[line - 1].encode()[:col].decode(errors="ignore"))
            whole = Skeleton(
                "".join(t + "\n" for t in lines), tuple(range(1, len(lines) + 1)), line
            )
            started = time.perf_counter()
            mine = _outcome(partial(libcst_facts, lines, tree, line, col, 1 << 30))
            middle = time.perf_counter()
            theirs = _outcome(partial(skeleton_facts, whole, col))
            file_s += time.perf_counter() - middle
            skeleton_s += middle - started
            hits += 1
            skeleton_bytes += len(_skeleton_text(lines, tree, line))
            file_bytes += len(whole.text)
            for field in _fields(mine, theirs):
                agree[field] += 1
                examples.setdefault(field, f"{path}:{line}:{col}\n    {mine!r}\n    {theirs!r}")
    print(f"root: {root}  hits: {hits}")
    print(f"skeleton bytes: {skeleton_bytes / max(file_bytes, 1):.1%} of the files'")
    print(f"LibCST seconds: skeletons {skeleton_s:.1f}, whole files {file_s:.1f} (cached per file)")
    for field, count in sorted(agree.items()):
        print(f"  {field}: {count} of {hits} differ ({count / max(hits, 1):.1%})")
        print(f"    e.g. {examples[field]}")


def _sample(root: Path, query: str, count: int) -> list[tuple[str, int, int]]:
    """``count`` of the query's word hits in Python files, the same ones each run."""
    argv = [rg_binary(), "--no-config", "-n", "--column", "-w", "--type", "py", query, "."]
    out = subprocess.run(argv, cwd=root, capture_output=True, text=True).stdout.splitlines()
    out.sort()
    random.Random(query).shuffle(out)
    hits = []
    for record in out[:count]:
        path, line, col, _ = record.split(":", 3)
        hits.append((path, int(line), int(col) - 1))
    return hits


def _parse(path: Path, limit: int) -> tuple[list[str], ast.Module] | None:
    try:
        text = path.read_text(encoding="utf-8")
        return (text.splitlines(), ast.parse(text)) if len(text) <= limit else None
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None


def _skeleton_text(lines: list[str], tree: ast.Module, line: int) -> str:
    from cq.enrich.skeleton import build_skeleton

    skeleton = build_skeleton(lines, tree, line)
    return skeleton.text if skeleton is not None else ""


def _outcome(facts: Callable[[], tuple[Any, Any]]) -> tuple[Any, Any] | str:
    """The facts, or what the stage raised (Skip, Limited, a LibCST error) as a string."""
    try:
        return facts()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


# Each field as (the part of the result, its attribute): 0 the structural facts, 1 the resolution.
_FIELDS = {
    "construct": (0, "construct"),
    "class_context": (0, "class_context"),
    "scope_chain": (0, "scope_chain"),
    "call_target": (0, "call_target"),
    "qualified_names": (1, "qualified_names"),
    "bindings": (1, "bindings"),
    "import_alias_chain": (1, "import_alias_chain"),
}


def _fields(mine: tuple[Any, Any] | str, theirs: tuple[Any, Any] | str) -> list[str]:
    """The fields two results differ in ("result" when they are not both facts)."""
    if mine == theirs:
        return []
    if isinstance(mine, str) or isinstance(theirs, str):
        return ["result"]
    differ = [
        name
        for name, (part, attribute) in _FIELDS.items()
        if getattr(mine[part], attribute, None) != getattr(theirs[part], attribute, None)
    ]
    return differ or ["other"]


if __name__ == "__main__":
    main()
