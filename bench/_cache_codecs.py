"""The ``codecs`` and ``diskcache`` parts of ``cache_growth.py`` (see its docstring)."""

from __future__ import annotations

import random
import sqlite3
import statistics
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path

from bench import _cache_fill as cf
from bench._common import stdlib_dir

_NL_QUERY = "where is the configuration parsed and validated"


def codecs(cq_dir: Path, cache: Path, trees: list[str]) -> None:
    """zlib vs zstd on the values of a real cache; vocabulary entries stored vs raw."""
    sys.path.insert(0, str(cq_dir))
    from cq.cache import codec
    from cq.cache.store import FILE_NAME

    roots = [stdlib_dir()] + [t.partition("=")[2] for t in trees]
    env = {"CQ_CACHE_DIR": str(cache), "CQ_LLM_URL": "http://127.0.0.1:9/"}
    for root in roots:
        for query in ("__init__", "new", _NL_QUERY):
            argv = [sys.executable, "-m", "cq", "search", query, "--root", root, "--rewrite"]
            if query != _NL_QUERY:
                argv.remove("--rewrite")
            subprocess.run(argv, cwd=cq_dir, env={**_os_env(), **env}, capture_output=True)
    db = sqlite3.connect(cache / FILE_NAME)
    rows = db.execute(
        "SELECT e.namespace, e.codec, e.value, u.size, u.raw, e.key FROM entries e"
        " JOIN usage u ON u.id = e.id"
    ).fetchall()
    print("\n## vocabulary entries (rewrite-vocabulary): raw -> stored")
    for namespace, _, _, size, raw, _ in rows:
        if namespace == "rewrite-vocabulary":
            print(f"{raw / 1e6:8.2f} MB -> {size / 1e6:6.2f} MB  ({raw / size:.2f}x)")
    groups: dict[str, list[bytes]] = {}
    for namespace, kind, value, _, _, key in rows:
        raw = codec.decode(kind, bytes(value), codec.binding(namespace, key))
        group = namespace.split("-")[0] + (
            "-" + namespace.split("-")[2] if "records" in namespace else ""
        )
        group += " >= 4 KB" if len(raw) >= 4096 else " < 4 KB"
        groups.setdefault(group, []).append(raw)
    import zstandard

    candidates: list[tuple[str, Callable[[bytes], bytes], Callable[[bytes], bytes]]] = [
        ("zlib -1", lambda b: zlib.compress(b, 1), zlib.decompress),
        ("zlib -6", lambda b: zlib.compress(b, 6), zlib.decompress),
    ]
    for level in (1, 3, 7):
        packer = zstandard.ZstdCompressor(level=level, write_checksum=True)
        candidates.append(
            (f"zstd -{level}", packer.compress, zstandard.ZstdDecompressor().decompress)
        )
    print("\n## codecs on a real cache's values (ratio, compress ms, decompress ms; best of 3)")
    for group, values in sorted(groups.items()):
        total = sum(map(len, values))
        print(f"{group}: {len(values)} values, {total / 1e6:.2f} MB")
        for name, pack, unpack in candidates:
            packed = [pack(v) for v in values]
            t_pack = _best(lambda pack=pack, values=values: [pack(v) for v in values])
            t_unpack = _best(lambda unpack=unpack, packed=packed: [unpack(p) for p in packed])
            ratio = total / sum(map(len, packed))
            print(f"   {name:<8}{ratio:6.2f}x {t_pack * 1e3:8.1f} {t_unpack * 1e3:8.1f}")


def against_diskcache(cq_dir: Path, work: Path, size_mb: int, runs: int) -> None:
    """Puts and batch reads on diskcache and on cq's store, both filled to ``size_mb``."""
    import diskcache

    sys.path.insert(0, str(cq_dir))
    from cq.cache.store import Store

    rng, text = random.Random(7), cf.corpus()
    mine = work / "cq"
    cf.fill(mine, cq_dir, size_mb << 20)
    store = Store(cf.db_path(mine, cq_dir), max_bytes=(size_mb << 20) * 2)
    theirs = diskcache.Cache(
        str(work / "diskcache"),
        size_limit=(size_mb << 20) * 2,
        eviction_policy="least-recently-used",
    )
    while theirs.volume() < size_mb << 20:
        with theirs.transact():
            for ns, key, value in cf.synthetic(rng, text, 2000):
                theirs.set((ns, key), value)
    print(f"\n## diskcache vs cq's store, both ~{size_mb} MB (ms, median of {runs})")
    print(f"{'':<12}{'put 1':>8}{'put 300':>9}{'get 300':>9}{'miss 1000':>10}")
    for name, put, get in (
        ("diskcache", _dc_put(theirs), _dc_get(theirs)),
        ("cq store", store.put_many, store.get_many),
    ):
        cells: list[list[float]] = [[], [], [], []]
        for _ in range(runs):
            one = {k: v for _, k, v in cf.synthetic(rng, text, 1)}
            many = {k: v for _, k, v in cf.synthetic(rng, text, 300) if len(v) < 100_000}
            absent = [f"{rng.getrandbits(128):032x}" for _ in range(1000)]
            cells[0].append(_timed(lambda put=put, one=one: put("bench-put", one)))
            cells[1].append(_timed(lambda put=put, many=many: put("bench-put", many)))
            cells[2].append(_timed(lambda get=get, many=many: get("bench-put", list(many))))
            cells[3].append(_timed(lambda get=get, absent=absent: get("bench-put", absent)))
        print(f"{name:<12}" + "".join(f"{statistics.median(c) * 1e3:>9.1f}" for c in cells))
    print(f"files: diskcache {_du(work / 'diskcache') / 1e6:.0f} MB, cq {_du(mine) / 1e6:.0f} MB")


def _dc_put(cache) -> Callable[[str, dict[str, bytes]], None]:
    def put(namespace: str, items: dict[str, bytes]) -> None:
        with cache.transact():
            for key, value in items.items():
                cache.set((namespace, key), value)

    return put


def _dc_get(cache) -> Callable[[str, list[str]], dict[str, bytes]]:
    def get(namespace: str, keys: list[str]) -> dict[str, bytes]:
        found = {}
        for key in keys:
            value = cache.get((namespace, key))
            if value is not None:
                found[key] = value
        return found

    return get


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _best(action: Callable[[], object]) -> float:
    return min(_timed(action) for _ in range(3))


def _du(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


def _os_env() -> dict[str, str]:
    import os

    return dict(os.environ)


def keys_page_size(work: Path, entries: int = 500_000, commits: int = 60) -> None:
    """The keys file's page size: commits of 300 random keys into ``entries`` keys, WAL,
    checkpoints included (a put dirties one keys page per entry)."""
    work.mkdir(parents=True, exist_ok=True)
    print(f"\n## keys page size: 300 random inserts into {entries} keys (ms per commit)")
    for page in (4096, 1024, 512):
        path = work / f"keys-{page}.sqlite3"
        db = sqlite3.connect(path, isolation_level=None)
        db.execute(f"PRAGMA page_size = {page}")
        db.execute("PRAGMA auto_vacuum = INCREMENTAL")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("CREATE TABLE keys (hash INTEGER PRIMARY KEY, id INTEGER NOT NULL)")
        rng = random.Random(1)
        db.execute("BEGIN")
        rows = ((rng.getrandbits(63), i) for i in range(entries))
        db.executemany("INSERT OR REPLACE INTO keys VALUES (?, ?)", rows)
        db.execute("COMMIT")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        times = []
        for _ in range(commits):
            start = time.perf_counter()
            db.execute("BEGIN IMMEDIATE")
            batch = [(rng.getrandbits(63), i) for i in range(300)]
            db.executemany("INSERT OR REPLACE INTO keys VALUES (?, ?)", batch)
            db.execute("COMMIT")
            times.append(time.perf_counter() - start)
        db.close()
        mean, mid = statistics.mean(times) * 1e3, statistics.median(times) * 1e3
        print(f"{page:>6} B pages: mean {mean:6.1f}  median {mid:6.1f}")
