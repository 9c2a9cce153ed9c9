"""The store on real sqlite files: values, compression, the bound, recency, several processes."""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cq, write_tree

from cq.cache import codec
from cq.cache.store import FILE_NAME, Store

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

MB = 1 << 20


def _text(rng: random.Random, size: int) -> bytes:
    """Compressible bytes shaped like code."""
    words = [f"name_{rng.randrange(300)}" for _ in range(size // 8 + 1)]
    return " ".join(words).encode()[:size]


def _db_bytes(path: Path) -> int:
    """The database's size with its WAL folded in (what the file is after a checkpoint)."""
    con = sqlite3.connect(path)
    try:
        (pages,) = con.execute("PRAGMA page_count").fetchone()
        (size,) = con.execute("PRAGMA page_size").fetchone()
        return pages * size
    finally:
        con.close()


def _age(path: Path, seconds: int) -> None:
    con = sqlite3.connect(path)
    con.execute("UPDATE usage SET used = used - ?", (seconds,))
    con.commit()
    con.close()


def test_values_come_back_unchanged_and_large_ones_are_stored_compressed(tmp_path: Path):
    rng = random.Random(1)
    store = Store(tmp_path / FILE_NAME)
    values = {
        "empty": b"",
        "small": b"x" * 100,
        "code": _text(rng, 200_000),
        "noise": rng.randbytes(50_000),  # does not compress: stored raw
    }
    store.put_many("ns", values)
    assert store.get_many("ns", [*values, "absent"]) == values
    assert store.get_many("other", list(values)) == {}
    sizes = store.sizes()
    assert sizes is not None and sizes.entries == 4
    assert sizes.raw_bytes == sum(map(len, values.values()))
    assert sizes.stored_bytes < sizes.raw_bytes - 150_000
    store.put_many("ns", {"code": b"replaced"})
    assert store.get_many("ns", ["code"]) == {"code": b"replaced"}
    store.delete("ns", "small")
    assert set(store.get_many("ns", values)) == {"empty", "noise", "code"}


def test_a_damaged_compressed_value_is_a_miss_and_is_dropped(tmp_path: Path) -> None:
    store = Store(tmp_path / FILE_NAME)
    store.put_many("ns", {"big": _text(random.Random(2), 100_000), "other": b"fine"})
    con = sqlite3.connect(tmp_path / FILE_NAME)
    damage = "UPDATE entries SET value = substr(value, 1, 40) || x'00ff00ff' WHERE codec = ?"
    con.execute(damage, (codec.ZSTD,))
    con.commit()
    con.close()
    assert store.get_many("ns", ["big", "other"]) == {"other": b"fine"}
    assert store.info()["ns"][0] == 1  # the damaged one was dropped


def test_the_file_stays_within_110_percent_of_its_bound(tmp_path: Path) -> None:
    rng = random.Random(3)
    path = tmp_path / FILE_NAME
    store = Store(path, max_bytes=2 * MB)
    last: dict[str, bytes] = {}
    # The bound is reached at round 31 (the first eviction); 70 rounds replace everything
    # the full file holds more than once, at the steady size.
    for round_ in range(70):
        last = {f"{round_}-{i}": _text(rng, rng.choice((300, 3000, 20_000))) for i in range(20)}
        store.put_many("ns", last)
        assert _db_bytes(path) <= 2.2 * MB, round_
    assert store.get_many("ns", list(last)) == last  # the newest survive
    assert store.get_many("ns", ["0-0", "1-0"]) == {}  # the oldest went
    store.close()
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    con.close()
    assert path.stat().st_size <= 2.2 * MB


def test_a_lower_bound_shrinks_the_file_and_prune_brings_it_under_now(tmp_path: Path) -> None:
    rng = random.Random(4)
    path = tmp_path / FILE_NAME
    store = Store(path, max_bytes=16 * MB)
    for round_ in range(40):
        store.put_many("ns", {f"{round_}-{i}": rng.randbytes(10_000) for i in range(20)})
    store.close()
    assert _db_bytes(path) > 7 * MB
    _age(path, 60)  # recency is kept to the second: these were written a minute ago
    smaller = Store(path, max_bytes=4 * MB)
    smaller.put_many("ns", {"one more": b"x" * 1000})  # one put gives back what is over
    assert _db_bytes(path) <= 4.4 * MB
    smaller.close()
    tiny = Store(path, max_bytes=1 * MB)
    tiny.prune()
    assert path.stat().st_size <= 1.1 * MB and not Path(f"{path}-wal").stat().st_size
    assert tiny.get_many("ns", ["one more"]) == {"one more": b"x" * 1000}


def test_what_was_read_recently_outlives_what_was_not(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    store = Store(path, max_bytes=2 * MB)
    rng = random.Random(5)
    old = {f"old{i}": rng.randbytes(20_000) for i in range(60)}
    store.put_many("ns", old)
    _age(path, 7200)  # written two hours ago
    kept = [f"old{i}" for i in range(0, 60, 6)]
    assert set(store.get_many("ns", kept)) == set(kept)  # read now
    for round_ in range(8):
        store.put_many("ns", {f"new{round_}-{i}": rng.randbytes(20_000) for i in range(10)})
    survivors = store.get_many("ns", list(old))
    assert set(kept) <= set(survivors) and len(survivors) < len(old)


def test_an_older_cq_cache_file_is_removed(tmp_path: Path) -> None:
    legacy = tmp_path / "cq.sqlite3"
    con = sqlite3.connect(legacy)
    con.execute("CREATE TABLE entries (namespace, key, value, size, used)")
    con.commit()
    con.close()
    Store(tmp_path / FILE_NAME).put_many("ns", {"k": b"v"})
    assert not legacy.exists() and (tmp_path / FILE_NAME).exists()


_WORKER = """
import hashlib, random, sys
from pathlib import Path
from typing import Any
from cq.cache.store import Store
path, seed = Path(sys.argv[1]), int(sys.argv[2])
store = Store(path, max_bytes=1 << 20)
rng = random.Random(seed)
def value(key):
    return hashlib.sha256(key.encode()).digest() * (1 + int(key.split("-")[1]) % 200)
wrong = 0
for round_ in range(150):
    keys = [f"k-{rng.randrange(3000)}" for _ in range(rng.randrange(1, 30))]
    if rng.random() < 0.5:
        store.put_many("shared", {k: value(k) for k in keys})
    else:
        wrong += sum(v != value(k) for k, v in store.get_many("shared", keys).items())
print(wrong, store.available)
"""


def test_several_processes_share_one_cache(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(path), str(seed)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in range(4)
    ]
    for worker in workers:
        out, err = worker.communicate(timeout=300)
        assert worker.returncode == 0 and err == "", err
        assert out.split() == ["0", "True"]  # no wrong value, never turned off
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    orphans = con.execute("SELECT count(*) FROM usage WHERE id NOT IN (SELECT id FROM entries)")
    assert orphans.fetchone() == (0,)
    con.close()
    assert _db_bytes(path) <= 1.1 * MB


def test_concurrent_searches_share_a_cold_cache(tmp_path: Path) -> None:
    body = "def target(x):\n    return x\n\n\ndef caller():\n    return target(1)\n"
    repo = write_tree(tmp_path / "repo", {f"m{i}.py": body for i in range(30)})
    argv = [sys.executable, "-m", "cq", "search", "target", "--root", str(repo), "--format"]
    steady = {"CQ_ENRICH_BUDGET_MS": "600000"}  # no wall-time cut on a loaded machine
    env = {**os.environ, **steady}
    runs = [
        subprocess.Popen([*argv, "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        for _ in range(4)
    ]
    outcomes = [run.communicate(timeout=300) for run in runs]
    baseline = run_cq(*argv[3:], "json", "--no-cache", env=steady)
    import json

    for out, err in outcomes:
        assert err == b""
        report = json.loads(out)
        report.pop("run")
        assert report == {k: v for k, v in baseline.json().items() if k != "run"}


def test_vocabulary_entries_are_stored_at_least_3x_smaller(_isolated_cache: Path) -> None:
    from cq.rewrite.vocabulary import load_vocabulary

    root = Path(sysconfig.get_paths()["stdlib"]) / "unittest"
    first = load_vocabulary(root)
    assert load_vocabulary(root) == first  # read back from the cache, unchanged
    con = sqlite3.connect(_isolated_cache / FILE_NAME)
    ((size, raw),) = con.execute(
        "SELECT size, raw FROM usage WHERE namespace LIKE 'rewrite-vocabulary-%'"
    ).fetchall()
    con.close()
    assert raw >= 3 * size


def test_cache_info_shows_the_bound_and_prune_brings_the_file_under_it(
    _isolated_cache: Path,
) -> None:
    path = _isolated_cache / FILE_NAME
    store = Store(path, max_bytes=64 * MB)
    rng = random.Random(6)
    for round_ in range(30):
        store.put_many("bench", {f"{round_}-{i}": rng.randbytes(10_000) for i in range(10)})
    store.close()
    info = run_cq("cache", "info", env={"CQ_CACHE_MAX_MB": "1"})
    assert info.returncode == 0, info.stderr
    assert "bench: 300 entries, 2.9 MB" in info.stdout and "(bound 1.0 MB)" in info.stdout
    assert "bound 0.5 MB" in info.stdout  # the database's half
    pruned = run_cq("cache", "prune", env={"CQ_CACHE_MAX_MB": "1"})
    assert pruned.returncode == 0 and pruned.stderr == ""
    assert path.stat().st_size <= 0.55 * MB
    after = run_cq("cache", "info", env={"CQ_CACHE_MAX_MB": "1"})
    count = int(after.stdout.split("bench: ")[1].split(" entries")[0])
    assert 20 < count < 55  # 10 KB entries in half a megabyte, the newest kept


@pytest.mark.parametrize("value", ["abc", "0", "-5"])
def test_a_bad_bound_warns_by_name_and_keeps_the_default(tmp_path: Path, value: str) -> None:
    repo = write_tree(tmp_path / "repo", {"a.py": "def target():\n    pass\n"})
    run = run_cq("search", "target", "--root", str(repo), env={"CQ_CACHE_MAX_MB": value})
    assert run.returncode == 0
    (line,) = run.stderr.splitlines()
    assert line.startswith("cq: warning: CQ_CACHE_MAX_MB=") and "512" in line


def test_a_store_opened_twice_in_one_process_keeps_working(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    first, second = Store(path), Store(path)
    first.put_many("ns", {"a": b"1"})
    second.put_many("ns", {"b": b"2"})
    both = {"a": b"1", "b": b"2"}
    assert first.get_many("ns", ["a", "b"]) == both == second.get_many("ns", ["a", "b"])


def _open_each_at_once(paths: list[Path], barrier: Any, failures: Any) -> None:
    from cq.cache import schema

    for path in paths:
        barrier.wait(timeout=120)  # all six at once, round after round
        try:
            schema.connect(path, 1 << 22).close()
        except sqlite3.Error as exc:
            failures.put(str(exc))


def test_processes_opening_one_new_cache_at_the_same_instant_all_get_it(tmp_path: Path) -> None:
    # Switching a new file to WAL fails at once, without the busy timeout, while another
    # process lays it out: before the retry 6 of 100 such rounds left a search uncached.
    # Six processes open each of 60 new files together (six processes for all the rounds:
    # a fork of the test process per open cost ~10 CPU-s).
    import multiprocessing

    fork = multiprocessing.get_context("fork")
    failures = fork.Queue()
    paths = [tmp_path / str(round_) / FILE_NAME for round_ in range(60)]
    for path in paths:
        path.parent.mkdir()
    barrier = fork.Barrier(6)
    workers = [
        fork.Process(target=_open_each_at_once, args=(paths, barrier, failures)) for _ in range(6)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=600)
        assert worker.exitcode == 0
    assert failures.empty()
