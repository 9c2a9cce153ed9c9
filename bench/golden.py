"""Golden comparison: cq's JSON over a fixed query set, timings and cache counters removed.

A refactor or a hardening change must leave ordinary searches byte-identical. Run it once on
the commit before the change (``--out before.json``) and once after (``--out after.json``),
then ``--compare before.json after.json`` lists every query whose output differs.

Trees: the stdlib of the running interpreter (site-packages excluded) always; ``--tree
NAME=DIR`` adds more (a Rust repository, the tuning-set repositories at a base commit), each
searched with the generic query set for its language. Every query runs twice, with an empty
cache and then warm, and both outputs must agree.

``--busy N`` runs the whole set with N CPU burners (processes spinning on the CPU, started
before the first query and stopped after the last): compared with an idle run's output, it
shows whether any result depends on the machine's load.

    python -m bench.golden --out idle.json
    python -m bench.golden --busy 2 --out busy.json
    python -m bench.golden --compare idle.json busy.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from bench._common import cq_command, scratch_dir, stdlib_dir
from cq.tools import cq_argv

# Key names whose values are clocks or cache state, not search results.
_VOLATILE = re.compile(r"(^|_)(ms|seconds|elapsed|timings?|cache|cached|counters)($|_)")

_PYTHON_QUERIES: tuple[tuple[str, ...], ...] = (
    ("register",),
    ("__init__", "--limit", "60"),
    ("urlopen", "--explain"),
    ("foo(",),
    ("OrderedDict", "--focus", "implementation"),
    ("ABCMeta.register",),
    ("how are log records formatted?",),
    ("get", "--profile", "literal", "--limit", "10"),
)
_RUST_QUERIES: tuple[tuple[str, ...], ...] = (
    ("new",),
    ("DateTime", "--limit", "40"),
    ("parse_from_str", "--explain"),
    ("Utc::now",),
    ("how is a timezone offset parsed?",),
)
_STDIN_ISSUE = (
    "Logger.setLevel does not accept a lower-case level name\n\n"
    "Calling logging.getLogger('x').setLevel('debug') raises ValueError: Unknown level: 'debug'.\n"
    "The _checkLevel helper only looks names up in _nameToLevel.\n"
)


def _strip(value: object) -> object:
    """The report less its volatile keys, and with the words that run this install's cq (the
    follow-ups' program: a venv's script path when it is not on PATH) as ``cq``: a baseline
    written in one checkout compares with a run in another, a fresh clone's included."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if not _VOLATILE.search(k)}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if isinstance(value, str) and _PROGRAM and _PROGRAM in value:
        return value.replace(_PROGRAM, "cq")
    return value


# The follow-ups' program as the searches spell it (``cq.tools.cq_argv``), when not "cq".
_PROGRAM = " ".join(cq_argv()) if cq_argv() != ("cq",) else ""


def _run(root: str, args: tuple[str, ...], cache: str, stdin: str | None = None) -> object:
    argv = [*cq_command(), "search", *args, "--root", root, "--format", "json"]
    if root == stdlib_dir():
        argv += ["--exclude", "site-packages/**"]
    env = {**os.environ, "CQ_CACHE_DIR": cache, "CQ_LLM_URL": "http://127.0.0.1:9/"}
    proc = subprocess.run(
        argv, input=stdin.encode() if stdin else None, capture_output=True, env=env
    )
    if proc.returncode not in (0, 1):
        return {"error": proc.returncode, "stderr": proc.stderr.decode(errors="replace")}
    return _strip(json.loads(proc.stdout))


def collect(trees: dict[str, str]) -> dict[str, object]:
    out: dict[str, object] = {}
    with scratch_dir() as cache:
        for name, root in trees.items():
            rust = any(Path(root).rglob("*.rs")) and not any(Path(root).glob("*.py"))
            queries = _RUST_QUERIES if rust else _PYTHON_QUERIES
            jobs = [(" ".join(q), q, None) for q in queries]
            if not rust:
                jobs.append(("- (issue text)", ("-",), _STDIN_ISSUE))
            for label, args, stdin in jobs:
                cold = _run(root, args, cache, stdin)
                warm = _run(root, args, cache, stdin)
                key = f"{name}: {label}"
                out[key] = cold
                if warm != cold:
                    out[key + " [warm differs]"] = warm
                print(f"{key}", file=sys.stderr)
    return out


_BURN = "while True:\n    pass\n"


@contextlib.contextmanager
def burners(count: int):  # type: ignore[no-untyped-def]
    """``count`` processes spinning on the CPU while the block runs, killed after it."""
    procs = [subprocess.Popen([sys.executable, "-c", _BURN]) for _ in range(count)]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--out", help="write the collected outputs here (JSON)")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--busy", type=int, default=0, metavar="N", help="CPU burners, see above")
    args = parser.parse_args()
    if args.compare:
        before, after = (json.loads(Path(p).read_text()) for p in args.compare)
        differ = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        for key in differ:
            print(f"differs: {key}")
        print(f"{len(before.keys() | after.keys()) - len(differ)} same, {len(differ)} differ")
        return 1 if differ else 0
    trees = {"stdlib": stdlib_dir()}
    for spec in args.tree:
        name, _, root = spec.partition("=")
        trees[name] = root
    with burners(args.busy):
        result = collect(trees)
    text = json.dumps(result, indent=1, sort_keys=True)
    if args.out:
        Path(args.out).write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
