"""A broken cache never breaks a search: corrupt pages, an unwritable or misplaced cache dir.

Each fault must give the same report and exit code as ``--no-cache``, one ``cq: warning:``
line on stderr, and ``cq cache info | prune | clear`` must work or say ``cq: ...`` once.
"""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cq, write_tree

from cq.cache.store import FILE_NAME

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

SOURCE = "def target(x):\n    return x + 1\n\n\nclass Holder:\n    def use(self):\n"
SOURCE += "        return target(2)\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    files = {f"pkg/m{i}.py": SOURCE.replace("Holder", f"Holder{i}") for i in range(6)}
    return write_tree(tmp_path / "repo", files)


# Reports are compared byte for byte: no wall-time budget may cut enrichment short on a
# loaded machine (the one documented source of variation between identical runs).
STEADY = {"CQ_ENRICH_BUDGET_MS": "600000"}


def _search(repo: Path, *extra: str, env: dict[str, str] | None = None):
    argv = ("search", "target", "--root", str(repo), "--format", "json", *extra)
    return run_cq(*argv, env={**STEADY, **(env or {})})


def _report(run) -> dict:
    """The JSON report without ``run`` (timings and cache counters)."""
    return {k: v for k, v in run.json().items() if k != "run"}


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def _corrupt(db: Path, how: str) -> None:
    """Write garbage into a real sqlite file, as a failing disk or a killed copy would."""
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    rng = random.Random(13)
    if how == "pages":  # every page but the first (the schema) is noise
        for start in range(page, len(data), page):
            data[start : start + page] = rng.randbytes(page)
    elif how == "header":
        data[0:100] = rng.randbytes(100)
    elif how == "truncated":  # the file ends halfway: pages the b-trees point to are gone
        del data[max(page, (len(data) // page // 2) * page) :]
    elif how == "layout":  # a cq cache with another table layout (a different cq version)
        other = sqlite3.connect(db)
        other.execute("ALTER TABLE usage DROP COLUMN raw")
        other.commit()
        other.close()
        return
    elif how == "foreign":  # a sound sqlite file, but someone else's
        db.unlink()
        other = sqlite3.connect(db)
        other.execute("CREATE TABLE notes (text)")
        other.commit()
        other.close()
        return
    db.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["pages", "header", "truncated", "foreign", "layout"])
def test_a_corrupt_database_is_a_miss_with_one_warning_then_rebuilt(
    repo: Path, _isolated_cache: Path, how: str
) -> None:
    baseline = _search(repo, "--no-cache")
    first = _search(repo)  # fills the cache
    assert _report(first) == _report(baseline) and first.stderr == ""
    _corrupt(_isolated_cache / FILE_NAME, how)

    hurt = _search(repo)
    assert hurt.returncode == baseline.returncode
    assert _report(hurt) == _report(baseline)
    (line,) = _warnings(hurt.stderr)
    assert line.startswith("cq: warning:") and "corrupt" in line
    assert (_isolated_cache / f"{FILE_NAME}.corrupt").exists()

    healed = _search(repo)
    again = _search(repo)
    assert healed.stderr == "" and again.stderr == ""
    assert _report(again) == _report(baseline)
    assert again.json()["run"]["counters"]["cache_hits"] == 6  # the rebuilt cache is used


@pytest.mark.parametrize("how", ["pages", "header", "truncated", "foreign", "layout"])
def test_cache_info_prune_clear_work_on_a_corrupt_database(
    repo: Path, _isolated_cache: Path, how: str
) -> None:
    _search(repo)
    _corrupt(_isolated_cache / FILE_NAME, how)
    info = run_cq("cache", "info")
    assert info.returncode == 0 and "bound" in info.stdout
    assert len(_warnings(info.stderr)) <= 1 and "Traceback" not in info.stderr
    for action in ("prune", "clear"):
        done = run_cq("cache", action)
        assert done.returncode == 0 and done.stderr == "", done.stderr
    assert not (_isolated_cache / FILE_NAME).exists()
    assert not (_isolated_cache / f"{FILE_NAME}.corrupt").exists()


@pytest.mark.parametrize("where", ["a file", "below a file"])
def test_a_cache_dir_that_is_a_file_is_a_miss_with_one_warning(
    repo: Path, tmp_path: Path, where: str
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("I am a file\n")
    env = {"CQ_CACHE_DIR": str(blocker if where == "a file" else blocker / "cq")}
    baseline = _search(repo, "--no-cache", env=env)
    hurt = _search(repo, env=env)
    assert hurt.returncode == baseline.returncode == 0
    assert _report(hurt) == _report(baseline)
    (line,) = _warnings(hurt.stderr)
    assert line.startswith("cq: warning: cache unavailable") and "not-a-dir" in line
    for action in ("info", "prune", "clear"):
        done = run_cq("cache", action, env=env)
        (error,) = _warnings(done.stderr)
        assert done.returncode == 2 and error.startswith("cq: cache"), done.stderr
        assert "internal error" not in error
    assert blocker.read_text() == "I am a file\n"


def _without_override() -> None:
    """In the child, before exec: drop the capabilities that let root write through mode
    bits (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER), so a read-only directory is
    read-only for cq even in a root container. Harmless when not root."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2, 3):
        libc.prctl(24, capability, 0, 0, 0)  # PR_CAPBSET_DROP


def _read_only_run(args: list[str], env: dict[str, str]):
    from conftest import CqRun

    proc = subprocess.run(
        [sys.executable, "-m", "cq", *args],
        capture_output=True,
        env={**os.environ, **STEADY, **env},
        preexec_fn=_without_override,
        timeout=120,
    )
    return CqRun(proc)


@pytest.mark.parametrize("with_database", [False, True])
def test_a_read_only_cache_dir_is_a_miss_with_one_warning(
    repo: Path, tmp_path: Path, with_database: bool
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    env = {"CQ_CACHE_DIR": str(cache)}
    if with_database:  # written by its owner, then only readable
        assert run_cq("search", "target", "--root", str(repo), env=env).returncode == 0
        (cache / FILE_NAME).chmod(0o444)
    cache.chmod(0o555)
    argv = ["search", "target", "--root", str(repo), "--format", "json"]
    baseline = _read_only_run([*argv, "--no-cache"], env)
    hurt = _read_only_run(argv, env)
    assert hurt.returncode == baseline.returncode == 0, hurt.stderr
    assert _report(hurt) == _report(baseline)
    (line,) = _warnings(hurt.stderr)
    assert line.startswith("cq: warning: cache unavailable"), line
    info = _read_only_run(["cache", "info"], env)
    assert "Traceback" not in info.stderr and "internal error" not in info.stderr
    assert (info.returncode == 0 and "bound" in info.stdout) or (
        info.returncode == 2 and _warnings(info.stderr)[0].startswith("cq: cache")
    )


def test_a_long_lived_server_gets_its_cache_back_once_the_fault_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cq mcp`` starts while its cache dir is blocked by a file, so its store goes off; once
    the file is gone, a later call finds the store reopened (with back-off) and writes to it:
    the fault does not keep the server uncached for its life."""
    import anyio
    from test_mcp_server import session, text_of

    names = [f"unique_name_{i}" for i in range(60)]  # a fresh file each call: nothing warm
    root = write_tree(
        tmp_path / "repo",
        {f"m{i}.py": f"def {n}():\n    return {i}\n" for i, n in enumerate(names)},
    )
    cache = tmp_path / "cache"
    cache.write_text("in the way\n")
    monkeypatch.setenv("CQ_CACHE_DIR", str(cache))
    database = cache / FILE_NAME

    async def scenario() -> int:
        with (tmp_path / "err").open("w") as errlog:
            async with session(root, errlog) as client:
                first = await client.call_tool("search", {"query": names[0]})
                assert not first.is_error and "m0.py" in text_of(first)
                cache.unlink()  # the fault passes while the server runs
                for calls, name in enumerate(names[1:], start=1):
                    found = await client.call_tool("search", {"query": name})
                    assert not found.is_error and name in text_of(found)
                    if database.exists():
                        return calls
                    await anyio.sleep(0.25)
        return 0

    assert anyio.run(scenario) > 0, "the store never came back"
    info = run_cq("cache", "info")
    assert info.returncode == 0 and "entries: 0," not in info.stdout, info.stdout
    warnings = (tmp_path / "err").read_text()
    assert warnings.count("cache unavailable") == 1 and "Traceback" not in warnings
