"""Nothing the cache reads back is trusted: damaged or moved values, a damaged schema, a WAL.

A value whose bytes changed, or that sits under another key, is a miss and is recomputed;
a damaged schema is set aside like any corruption; the store's files, WAL included, keep to
the bound. Each case gives the report of ``--no-cache`` and never a traceback.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest
from conftest import run_cq, write_tree
from test_cache_faults import _report, _search, _warnings

from cq.cache.store import FILE_NAME, Store

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

MB = 1 << 20


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    source = "def target(x):\n    return x + 1\n\n\nclass Holder:\n    def use(self):\n"
    source += "        return target(2)\n"
    files = {f"pkg/m{i}.py": source.replace("Holder", f"Holder{i}") for i in range(6)}
    return write_tree(tmp_path / "repo", files)


def _rows(db: Path) -> list[tuple[int, str, bytes]]:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT id, namespace, value FROM entries ORDER BY id").fetchall()
    finally:
        con.close()


def _set_values(db: Path, values: dict[int, bytes]) -> None:
    con = sqlite3.connect(db)
    rows = [(value, entry) for entry, value in values.items()]
    con.executemany("UPDATE entries SET value = ? WHERE id = ?", rows)
    con.commit()
    con.close()


def _flip(value: bytes, at: int) -> bytes:
    return value[:at] + bytes([value[at] ^ 0x01]) + value[at + 1 :]


def test_a_flipped_byte_in_a_small_value_is_a_miss(tmp_path: Path) -> None:
    store = Store(tmp_path / FILE_NAME)
    values = {f"k{i}": f"a finding at line {i}".encode() for i in range(20)}
    store.put_many("ns", values)
    rows = _rows(tmp_path / FILE_NAME)
    _set_values(tmp_path / FILE_NAME, {i: _flip(v, len(v) - 3) for i, _, v in rows[::2]})
    found = store.get_many("ns", values)
    assert found == {k: v for k, v in values.items() if int(k[1:]) % 2}  # none changed
    assert store.info()["ns"][0] == 10  # the damaged ones were dropped


def test_values_swapped_between_keys_are_misses(tmp_path: Path) -> None:
    store = Store(tmp_path / FILE_NAME)
    values = {"a": b"value of a", "b": b"value of b", "c": b"value of c"}
    store.put_many("ns", values)
    (a, _, va), (b, _, vb), _ = _rows(tmp_path / FILE_NAME)
    _set_values(tmp_path / FILE_NAME, {a: vb, b: va})
    assert store.get_many("ns", values) == {"c": b"value of c"}


def test_a_search_over_swapped_cache_values_reports_as_without_the_cache(
    repo: Path, _isolated_cache: Path
) -> None:
    baseline = _search(repo, "--no-cache")
    assert _search(repo).stderr == ""  # fills the cache
    db = _isolated_cache / FILE_NAME
    by_namespace: dict[str, list[tuple[int, bytes]]] = {}
    for entry, namespace, value in _rows(db):
        by_namespace.setdefault(namespace, []).append((entry, value))
    moved = {}
    for rows in by_namespace.values():  # each value goes to the next key of its kind
        for (entry, _), (_, value) in zip(rows, rows[1:] + rows[:1], strict=True):
            moved[entry] = value
    _set_values(db, moved)

    hurt = _search(repo)
    assert hurt.returncode == baseline.returncode == 0, hurt.stderr
    assert hurt.stderr == "" and _report(hurt) == _report(baseline)
    again = _search(repo)  # the misses were recomputed and stored again
    assert _report(again) == _report(baseline)
    assert again.json()["run"]["counters"]["cache_hits"] == 6


def _damage_schema(db: Path, text: bytes, offset: int) -> None:
    """One bad byte in the schema's SQL text, as a failing disk would leave it."""
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    data = bytearray(db.read_bytes())
    data[data.index(text) + offset] = 0xFF
    db.write_bytes(bytes(data))


@pytest.mark.parametrize(("text", "offset"), [(b"ON usage(used)", 4), (b"CREATE TABLE usage", 5)])
def test_a_damaged_schema_is_set_aside_and_cache_clear_removes_it(
    repo: Path, _isolated_cache: Path, text: bytes, offset: int
) -> None:
    baseline = _search(repo, "--no-cache")
    _search(repo)
    db = _isolated_cache / FILE_NAME
    _damage_schema(db, text, offset)
    hurt = _search(repo)
    assert hurt.returncode == baseline.returncode == 0, hurt.stderr
    assert _report(hurt) == _report(baseline)
    (line,) = _warnings(hurt.stderr)
    assert line.startswith("cq: warning: cache database") and "corrupt" in line

    _damage_schema(db, text, offset)  # damaged again, then only the cure is run
    (db.parent / f"{FILE_NAME}.corrupt").unlink()
    cleared = run_cq("cache", "clear")
    assert cleared.returncode == 0 and cleared.stderr == "", cleared.stderr
    assert not db.exists() and not list(db.parent.glob("*.corrupt"))
    info = run_cq("cache", "info")
    assert info.returncode == 0 and info.stderr == ""


def _store_bytes(directory: Path) -> int:
    """Every file of the store on disk: databases, WALs, shared memory."""
    return sum(p.stat().st_size for p in directory.glob("cq-v2*.sqlite3*"))


def test_the_store_with_its_wal_stays_within_its_bound_after_every_put(tmp_path: Path) -> None:
    rng = random.Random(7)
    store = Store(tmp_path / FILE_NAME, max_bytes=1 * MB)
    for round_ in range(12):
        batch = {
            f"{round_}-{i}": rng.randbytes(rng.choice((300, 3000, 20_000)))
            for i in range(rng.choice((20, 200)))
        }
        store.put_many("ns", batch)
        assert _store_bytes(tmp_path) <= 1.1 * MB, round_
        found = store.get_many("ns", batch)
        assert found and all(batch[k] == v for k, v in found.items())


def _limited_run(args: list[str], limit: int):
    """``cq`` with no file able to grow past ``limit`` bytes (RLIMIT_FSIZE; SIGXFSZ ignored,
    so a write past it fails with EFBIG): a full disk, even for root."""
    import resource
    import signal

    def limit_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return run_cq(*args, env={"CQ_ENRICH_BUDGET_MS": "600000"}, preexec=limit_files)


@pytest.mark.parametrize("filled", [False, True])
def test_a_full_disk_is_a_miss_with_one_warning(
    repo: Path, _isolated_cache: Path, filled: bool
) -> None:
    if filled:  # a cache that cannot grow any more, then new content to store
        assert _search(repo).returncode == 0
        (repo / "pkg" / "new.py").write_text("def target_too():\n    return target(3)\n")
    limit = max((p.stat().st_size for p in _isolated_cache.glob("*")), default=0)
    argv = ["search", "target", "--root", str(repo), "--format", "json"]
    baseline = _search(repo, "--no-cache")
    hurt = _limited_run(argv, limit)
    assert hurt.returncode == baseline.returncode == 0, hurt.stderr
    assert _report(hurt) == _report(baseline)
    (line,) = _warnings(hurt.stderr)
    assert line.startswith("cq: warning: cache unavailable"), line
    for action in ("info", "prune", "clear"):
        done = _limited_run(["cache", action], limit)
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr
        assert done.returncode == 0 or _warnings(done.stderr)[0].startswith("cq: cache")


def test_a_key_with_undecodable_bytes_is_never_stored_and_breaks_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path / FILE_NAME)
    odd = "/tree/b\udcff.py"  # a file name that is not UTF-8, as os.fsdecode gives it
    store.put_many("ns", {odd: b"1", "fine": b"2"})
    assert store.get_many("ns", [odd, "fine"]) == {"fine": b"2"}
    assert store.available and store.notice is None
