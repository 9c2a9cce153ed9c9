"""Does cq's cache cost grow with its size? A synthetic cache filled to N MB against an empty one.

Parts (``--part``, repeatable; default ``put`` and ``search``):

- ``put``: one put (1 entry; a search-sized batch of 300) into the cache at growing sizes,
  each in a fresh process, with the database in the page cache (hot) and dropped from it.
- ``search``: ``cq search`` with the filled cache against an empty one, the searched tree
  cold (nothing of it cached) and warm, the database hot and dropped
  (``posix_fadvise(DONTNEED)``: every cq run is a fresh process), rg in the same run.
- ``bound``: searches against a cache at its bound (``CQ_CACHE_MAX_MB`` = its size), so each
  one evicts: the file's size against the bound after every search, and the time against the
  same search with a bound far away.
- ``codecs``: zlib against zstd on the values of a real cache (cq run over ``--tree``s), and
  the vocabulary entries' stored size against their raw size.
- ``keys``: the key index's page size (random inserts into 500,000 keys, WAL).
- ``diskcache``: the same puts and batch reads on ``diskcache.Cache`` (``pip install
  diskcache``) and on cq's store, both filled to the same size.

``--cq-dir DIR`` runs another cq checkout (e.g. the commit before the v2 store, from ``git
worktree add``) for before/after figures; that store format is filled directly with sqlite.

    python -m bench.cache_growth --size-mb 1024 --runs 3
    python -m bench.cache_growth --part bound --size-mb 512 --runs 5
    python -m bench.cache_growth --part codecs --tree chrono=$CQ_BENCH_TREES/chrono
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench import _cache_fill as cf
from bench._common import median, rg_binary, stdlib_dir, time_command

HERE = Path(__file__).resolve().parent
_PUT = """
import json, random, sys, time
from pathlib import Path
sys.path.append({bench!r})  # after PYTHONPATH: --cq-dir names the cq to run
from bench import _cache_fill as cf
from cq.cache.store import Store
t0 = time.perf_counter()
store = Store(Path({path!r}), {bound})
t1 = time.perf_counter()
text, rng = cf.corpus(8 << 20), random.Random({seed})
def batch(n):
    return {{k: v for _, k, v in cf.synthetic(rng, text, n) if len(v) < 100_000}}
one, many = batch(1), batch(300)
t2 = time.perf_counter()
store.put_many("bench-put", one)
t3 = time.perf_counter()
store.put_many("bench-put", many)
t4 = time.perf_counter()
store.get_many("bench-put", list(many))
t5 = time.perf_counter()
print(json.dumps({{"open": t1 - t0, "put1": t3 - t2, "put300": t4 - t3, "get300": t5 - t4}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part",
        action="append",
        choices=("put", "search", "bound", "codecs", "diskcache", "keys"),
    )
    parser.add_argument("--size-mb", type=int, default=1024, help="filled cache size")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--root", default=stdlib_dir(), help="searched tree")
    parser.add_argument("-q", "--query", action="append", help="search query (repeatable)")
    parser.add_argument("--exclude", action="append", default=["site-packages/**"])
    parser.add_argument("--cq-dir", type=Path, default=HERE.parent, help="cq checkout to run")
    parser.add_argument("--work", type=Path, help="where the caches go (default: a temp dir)")
    parser.add_argument("--tree", action="append", default=[], help="NAME=DIR for codecs")
    args = parser.parse_args()
    parts = args.part or ["put", "search"]
    work = args.work or Path(tempfile.mkdtemp(prefix="cq-cache-growth-"))
    work.mkdir(parents=True, exist_ok=True)
    cq_dir = args.cq_dir.resolve()
    print(f"cq: {cq_dir} ({'legacy' if cf.is_legacy(cq_dir) else 'v2'} store); work: {work}")
    try:
        if "put" in parts:
            put_cost(cq_dir, work / "put", args.size_mb, args.runs)
        if "search" in parts:
            search_cost(args, cq_dir, work)
        if "bound" in parts:
            at_bound(args, cq_dir, work)
        if "codecs" in parts:
            from _cache_codecs import codecs

            codecs(cq_dir, work / "codecs", args.tree)
        if "diskcache" in parts:
            from _cache_codecs import against_diskcache

            against_diskcache(cq_dir, work / "diskcache", args.size_mb, args.runs)
        if "keys" in parts:
            from _cache_codecs import keys_page_size

            keys_page_size(work / "keys")
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


def put_cost(cq_dir: Path, cache: Path, size_mb: int, runs: int) -> None:
    """Put and read cost at growing sizes, hot and dropped, each in a fresh process."""
    path = cf.db_path(cache, cq_dir)
    print("\n## put cost vs cache size (ms, median of runs; fresh process each)")
    print(f"{'file MB':>8} {'db':>8} {'open':>7} {'put 1':>7} {'put 300':>8} {'get 300':>8}")
    for level in sorted({0, size_mb // 4, size_mb // 2, size_mb}):
        if level:
            cf.fill(cache, cq_dir, level << 20)
        for state in ("hot", "dropped"):
            rows = []
            for run in range(runs):
                if state == "dropped":
                    cf.drop_from_page_cache(path)
                code = _PUT.format(bench=str(HERE.parent), path=str(path), bound=1 << 40, seed=run)
                rows.append(json.loads(cf.in_cq(cq_dir, code)))
                cf.forget_searches(path, cq_dir)  # the bench-put rows stay small
            mb = path.stat().st_size / 1e6 if path.exists() else 0
            cells = [
                median([r[k] for r in rows]) * 1e3 for k in ("open", "put1", "put300", "get300")
            ]
            print(f"{mb:>8.0f} {state:>8} " + " ".join(f"{c:>7.1f}" for c in cells))


def _cq_argv(args: argparse.Namespace, query: str) -> list[str]:
    excludes = [a for glob in args.exclude for a in ("--exclude", glob)]
    return [sys.executable, "-m", "cq", "search", query, "--root", args.root, *excludes]


def _rg_argv(args: argparse.Namespace, query: str) -> list[str]:
    excludes = [a for glob in args.exclude for a in ("-g", "!" + glob)]
    return [rg_binary(), "--json", "-w", *excludes, "-e", query, "."]


def search_cost(args: argparse.Namespace, cq_dir: Path, work: Path) -> None:
    """Filled vs empty cache, cold and warm tree, hot and dropped database."""
    full, empty = work / "full", work / "empty"
    full_db, empty_db = cf.db_path(full, cq_dir), cf.db_path(empty, cq_dir)
    if not full_db.exists() or full_db.stat().st_size < args.size_mb << 20:
        cf.fill(full, cq_dir, args.size_mb << 20)
    bound = str(max(args.size_mb * 2, 1024))  # no eviction here: ``bound`` measures that
    print(f"\n## search with a {full_db.stat().st_size / 1e6:.0f} MB cache vs an empty one")
    print(
        f"{'query':<34}{'tree':>5}{'db':>8}{'empty s':>9}{'full s':>8}{'diff ms':>9}"
        f"{'ratio':>7}{'rg s':>7}"
    )
    for query in args.query or ["register", "where does json raise decode errors"]:
        cq_argv, rg_argv = _cq_argv(args, query), _rg_argv(args, query)
        for tree in ("cold", "warm"):
            for state in ("hot", "dropped"):
                times: dict[str, list[float]] = {"empty": [], "full": [], "rg": []}
                for _ in range(args.runs):
                    for name, cache, db in (("empty", empty, empty_db), ("full", full, full_db)):
                        if tree == "cold":
                            cf.forget_searches(db, cq_dir)
                        elif not _has_search_entries(db, cq_dir):
                            time_command(cq_argv, env=_env(cache, bound), cwd=str(cq_dir))
                        if db.exists():
                            cf.checkpoint(db)
                            if state == "dropped":
                                cf.drop_from_page_cache(db)
                        run = time_command(cq_argv, env=_env(cache, bound), cwd=str(cq_dir))
                        times[name].append(run.seconds)
                    times["rg"].append(time_command(rg_argv, cwd=args.root).seconds)
                e, f, r = (median(times[k]) for k in ("empty", "full", "rg"))
                print(
                    f"{query[:33]:<34}{tree:>5}{state:>8}{e:>9.3f}{f:>8.3f}"
                    f"{(f - e) * 1e3:>9.0f}{f / e:>7.2f}{r:>7.3f}"
                )


def at_bound(args: argparse.Namespace, cq_dir: Path, work: Path) -> None:
    """Searches that each evict: file size against the bound, time against no eviction."""
    full = work / "full"
    db = cf.db_path(full, cq_dir)
    if not db.exists() or db.stat().st_size < args.size_mb << 20:
        cf.fill(full, cq_dir, args.size_mb << 20)
    cf.checkpoint(db)
    bound_mb = db.stat().st_size / (1 << 20)
    spare = work / "spare"  # the same filled cache, far from its bound
    shutil.rmtree(spare, ignore_errors=True)
    shutil.copytree(full, spare)
    spare_db = cf.db_path(spare, cq_dir)
    queries = args.query or ["register", "urlopen", "dumps", "Decimal", "parse_args", "encode"]
    print(f"\n## searches at the bound ({bound_mb:.0f} MB): each one cold for its query")
    print(
        f"{'query':<14}{'at bound s':>11}{'far s':>8}{'diff ms':>9}{'file/bound':>11}{'wal MB':>8}"
    )
    worst = 0.0
    for query in queries * max(1, args.runs // 2):
        cq_argv = _cq_argv(args, query)
        for path in (db, spare_db):
            cf.forget_searches(path, cq_dir)
            cf.checkpoint(path)
        at_mb = f"{_total_mb(cq_dir, bound_mb):.3f}"
        at = time_command(cq_argv, env=_env(full, at_mb), cwd=str(cq_dir))
        far = time_command(cq_argv, env=_env(spare, str(int(bound_mb * 4))), cwd=str(cq_dir))
        size = db.stat().st_size / (1 << 20)
        wal = _size(Path(f"{db}-wal")) / (1 << 20)
        worst = max(worst, size / bound_mb)
        print(
            f"{query:<14}{at.seconds:>11.3f}{far.seconds:>8.3f}"
            f"{(at.seconds - far.seconds) * 1e3:>9.0f}{size / bound_mb:>11.3f}{wal:>8.1f}"
        )
    print(f"largest file/bound after a search: {worst:.3f}")
    print("\n## one put of 300 entries into the cache at its bound (evicts) vs far from it")
    print(f"{'db':>8}{'at bound ms':>12}{'far ms':>8}{'eviction ms':>12}")
    for state in ("hot", "dropped"):
        cells: dict[str, list[float]] = {"at": [], "far": []}
        for run in range(max(3, args.runs)):
            files = _size(db) + _size(db.with_name("cq-v2-keys.sqlite3"))
            for name, limit in (("at", files), ("far", 1 << 40)):
                if state == "dropped":
                    cf.drop_from_page_cache(db)
                code = _PUT.format(bench=str(HERE.parent), path=str(db), bound=limit, seed=run)
                cells[name].append(json.loads(cf.in_cq(cq_dir, code))["put300"] * 1e3)
        at, far = median(cells["at"]), median(cells["far"])
        print(f"{state:>8}{at:>12.1f}{far:>8.1f}{at - far:>12.1f}")


def _has_search_entries(db: Path, cq_dir: Path) -> bool:
    import sqlite3

    if not db.exists():
        return False
    con = sqlite3.connect(db, timeout=30)
    try:
        row = con.execute("SELECT 1 FROM entries WHERE namespace NOT LIKE 'bench-%' LIMIT 1")
        return row.fetchone() is not None
    finally:
        con.close()


def _total_mb(cq_dir: Path, database_mb: float) -> float:
    """The ``CQ_CACHE_MAX_MB`` that gives the database ``database_mb``: twice it where the
    database has half the bound (a checkout with ``cq/cache/footprint.py``)."""
    return database_mb * (2 if (cq_dir / "cq" / "cache" / "footprint.py").exists() else 1)


def _env(cache: Path, bound_mb: str) -> dict[str, str]:
    return {
        "CQ_CACHE_DIR": str(cache),
        "CQ_CACHE_MAX_MB": bound_mb,
        "CQ_LLM_URL": "http://127.0.0.1:9/",  # the offline rewriter, as in the tests
        "CQ_ENRICH_BUDGET_MS": "600000",  # no wall-time cut: both caches do the same work
    }


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    t = time.perf_counter()
    main()
    print(f"\n(bench took {time.perf_counter() - t:.0f} s)")
