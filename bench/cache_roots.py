"""Does the cache dir keep to its bound when many roots are searched with questions?

Makes N small distinct Python trees (``--roots``, default 500; each a few modules with names
of its own), asks each one question with a fresh cache dir at ``CQ_CACHE_MAX_MB``
(``--bound-mb``), and after every search sums every file under the cache dir (database,
WAL, repository indexes, Pyrefly scratch). Then deletes every other tree and runs
``cq cache prune``: the indexes of the trees that are gone must be removed. Prints the
largest size seen against the bound, how many roots ``cq cache info`` lists, and the seconds
a search took (median).

    python -m bench.cache_roots --roots 500 --bound-mb 4
    python -m bench.cache_roots --roots 30 --bound-mb 1 --modules 40   # quick, evicting
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench._common import cq_command, scratch_dir

_QUESTION = "where is the {word} record validated before it is saved"


def _make_root(base: Path, n: int, modules: int) -> Path:
    """A tree whose identifiers are its own, so each root's index holds different words."""
    root = base / f"root{n:04d}"
    word = f"item{n}"
    for m in range(modules):
        body = "".join(
            f"def {verb}_{word}_{m}(record):\n"
            f'    """{verb.capitalize()} the {word} record number {m}."""\n'
            f"    return record.{verb}_{n}_{m}() + {n * 10 + m}\n\n\n"
            for verb in ("validate", "save", "load", "render", "parse", "check", "emit", "merge")
        )
        path = root / f"pkg{n}" / f"mod{m}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    return root


def _dir_bytes(directory: Path) -> int:
    total = 0
    for folder, _dirs, files in os.walk(directory):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--roots", type=int, default=500)
    parser.add_argument("--bound-mb", type=float, default=4.0)
    parser.add_argument("--modules", type=int, default=12, help="modules per tree (index size)")
    args = parser.parse_args()
    bound = int(args.bound_mb * 1024 * 1024)
    with scratch_dir(prefix="cq-roots-") as tmp:
        base = Path(tmp)
        cache = base / "cache"
        env = {
            **os.environ,
            "CQ_CACHE_DIR": str(cache),
            "CQ_CACHE_MAX_MB": str(args.bound_mb),
            "CQ_LLM_URL": "http://127.0.0.1:9/",
        }
        largest, seconds, failures = 0, [], 0
        roots = [_make_root(base / "trees", n, args.modules) for n in range(args.roots)]
        for n, root in enumerate(roots):
            argv = [*cq_command(), "search", _QUESTION.format(word=f"item{n}"), "--root", str(root)]
            started = time.perf_counter()
            run = subprocess.run(argv, env=env, capture_output=True)
            seconds.append(time.perf_counter() - started)
            failures += run.returncode != 0 or b"Traceback" in run.stderr
            largest = max(largest, _dir_bytes(cache))
        info = subprocess.run([*cq_command(), "cache", "info"], env=env, capture_output=True)
        listed = info.stdout.decode().count(", last used ")
        for root in roots[::2]:
            shutil.rmtree(root)
        subprocess.run([*cq_command(), "cache", "prune"], env=env, capture_output=True)
        after = subprocess.run([*cq_command(), "cache", "info"], env=env, capture_output=True)
        gone = after.stdout.decode().count(" (gone)")
        print(f"roots searched: {args.roots}, failed runs: {failures}")
        print(
            f"largest cache dir after a search: {largest / 1048576:.2f} MB,"
            f" bound {args.bound_mb:.2f} MB ({largest / bound:.0%})"
        )
        print(f"roots listed by cq cache info: {listed}")
        print(f"after deleting half the trees and cq cache prune: {gone} gone roots listed")
        print(f"search seconds, median: {statistics.median(seconds):.2f}")
        return 0 if largest <= bound * 1.1 and not failures and not gone else 1


if __name__ == "__main__":
    sys.exit(main())
