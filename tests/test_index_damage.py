"""A damaged, missing or unusable repository index never changes a report nor fails a search.

Each test damages a real index in a real cache dir (built by ``cq index`` or a search) the way
the fault campaign did, then runs the real CLI: the answer is the one a clean index gives
(the same as ``--no-cache``, which indexes in memory), with one warning line saying what was
wrong, and no traceback. ``cq index`` finds the damage and repairs it.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cq.index import indexed_files
from tests.conftest import FORKED, isolate, run_cq, run_hooked, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

QUESTION = "where are the upload chunks handled?"
# A search waits for the index until its --timeout: beside CPU burners a rebuild took longer
# than the default and the answer came without the index. Only test_timeout_bounds_... is
# about that deadline; the others wait for the index whatever the machine's load.
PATIENT = ("--timeout", "600")
MODULE = '''def handler_{i}(request):
    """Handle upload number {i} of the chunks."""
    return request.chunk_{i}


class Store{i}:
    def save(self, name):
        return name
'''


def _tree(root: Path, count: int = 30) -> Path:
    return write_tree(root, {f"app/m{i}.py": MODULE.format(i=i) for i in range(1, count + 1)})


def _search(root: Path, cache: Path, *extra: str, timeout: float = 120):  # type: ignore[no-untyped-def]
    return run_cq(
        *("search", "--root", str(root), "--format", "json", *PATIENT, *extra, "--", QUESTION),
        env={"CQ_CACHE_DIR": str(cache)},
        timeout=timeout,
    )


def _answer(run) -> tuple[list, list]:  # type: ignore[no-untyped-def]
    """The findings (file, line, tier) and the Relevant Functions of a clean run."""
    assert run.returncode in (0, 1), run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    data = run.json()
    findings = [(f["file"], f["line"], f["tier"]) for f in data["findings"]]
    functions = next((s["functions"] for s in data["sections"] if s["type"] == "functions"), [])
    return findings, [f["name"] for f in functions]


def _index_warnings(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if "repository index" in ln]


def _build(base: Path) -> tuple[Path, Path, Path, tuple[list, list]]:
    """A tree, its cache dir with an index built by ``cq index``, the index's directory and
    the answer of ``--no-cache`` (an index built in memory for the search)."""
    root = _tree(base / "root")
    cache = base / "cache"
    indexed = run_cq("index", "--root", str(root), env={"CQ_CACHE_DIR": str(cache)})
    assert indexed.returncode == 0, indexed.stderr
    (directory,) = (cache / "index").glob("v*/*")
    expected = _answer(_search(root, base / "unused", "--no-cache"))
    assert expected[0] and any(t == "index" for _, _, t in expected[0])  # the index has a say
    assert _answer(_search(root, cache)) == expected
    return root, cache, directory, expected


@pytest.fixture(scope="module")
def _pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, tuple]:
    """One tree and its clean index for the module (built before any test's own fixtures,
    so in the environment they give each test: ``isolate``)."""
    base = tmp_path_factory.mktemp("index-damage")
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, base / "unused-cache", tmp_path_factory.mktemp("xdg-config"))
        mp.setenv(FORKED, "1")
        return _build(base)


@pytest.fixture
def built(_pristine, tmp_path: Path) -> tuple[Path, Path, Path, tuple[list, list]]:  # type: ignore[no-untyped-def]
    """The module's tree (which these tests leave as it is: an index is keyed by its root's
    path, so the root is shared) with a cache dir of the test's own, a copy of the clean one
    to damage."""
    root, clean, directory, expected = _pristine
    cache = tmp_path / "cache"
    shutil.copytree(clean, cache, symlinks=True)
    return root, cache, cache / directory.relative_to(clean), expected


@pytest.fixture
def built_own(tmp_path: Path) -> tuple[Path, Path, Path, tuple[list, list]]:
    """As ``built``, with a tree of the test's own: for the tests that change the tree."""
    return _build(tmp_path)


def _segment_file(directory: Path, suffix: str) -> Path:
    """One segment's file of that kind (the writer's threads may leave several segments)."""
    paths = sorted(directory.glob(f"*.{suffix}"))
    assert paths, f"no *.{suffix} file"
    return paths[0]


def _assert_repaired(root: Path, cache: Path, expected: tuple[list, list]) -> None:
    """The damaged index answers as a clean one, saying once that it was rebuilt; the next
    search has nothing to say about it."""
    run = _search(root, cache)
    assert _answer(run) == expected
    assert len(_index_warnings(run.stderr)) == 1, run.stderr
    again = _search(root, cache)
    assert _answer(again) == expected and not _index_warnings(again.stderr), again.stderr


def test_a_max_doc_too_small_in_meta_json_is_rebuilt_not_a_panic(built) -> None:  # type: ignore[no-untyped-def]
    root, cache, directory, expected = built
    meta = directory / "meta.json"
    data = json.loads(meta.read_text())
    largest = max(data["segments"], key=lambda segment: segment["max_doc"])  # of the threads'
    largest["max_doc"] = 3
    meta.write_text(json.dumps(data))
    _assert_repaired(root, cache, expected)


def test_a_panic_of_tantivy_past_the_checks_is_caught_and_rebuilt(built) -> None:  # type: ignore[no-untyped-def]
    """Damage the checks cannot see (``meta.json``'s ``max_doc`` too small, the manifest's
    seal forged to match): tantivy panics when asked; the search catches the panic, builds
    the index again and answers as a clean one, with one warning (Rust's panic hook prints
    its own message too: no Python traceback)."""
    from cq.index.integrity import seal
    from cq.index.manifest import read_manifest, write_manifest

    root, cache, directory, expected = built
    meta = directory / "meta.json"
    data = json.loads(meta.read_text())
    largest = max(data["segments"], key=lambda segment: segment["max_doc"])  # of the threads'
    largest["max_doc"] = 3
    meta.write_text(json.dumps(data))
    stored = read_manifest(directory / "manifest.msgpack")
    assert stored is not None
    write_manifest(directory / "manifest.msgpack", stored.files, seal(directory))
    _assert_repaired(root, cache, expected)
    run = run_cq("index", "--root", str(root), env={"CQ_CACHE_DIR": str(cache)})
    assert "documents: 150" in run.stdout and not run.stderr, run.stderr


def test_a_flipped_bit_in_a_fieldnorm_file_is_found_and_rebuilt(built) -> None:  # type: ignore[no-untyped-def]
    root, cache, directory, expected = built
    path = _segment_file(directory, "fieldnorm")
    data = bytearray(path.read_bytes())
    data[int(len(data) * 0.7)] ^= 0x40
    path.write_bytes(bytes(data))
    _assert_repaired(root, cache, expected)


def test_cq_index_finds_a_zeroed_idx_header_and_repairs_it(built) -> None:  # type: ignore[no-untyped-def]
    root, cache, directory, expected = built
    path = _segment_file(directory, "idx")
    data = bytearray(path.read_bytes())
    data[:64] = bytes(64)
    path.write_bytes(bytes(data))
    run = run_cq("index", "--root", str(root), env={"CQ_CACHE_DIR": str(cache)})
    assert run.returncode == 0, run.stderr
    (warning,) = _index_warnings(run.stderr)
    assert "damaged" in warning and ".idx" in warning
    assert "documents: 150" in run.stdout  # 30 files, each with a module, function, class, method
    assert "checked:" not in run.stdout  # nothing was as last committed
    again = _search(root, cache)
    assert _answer(again) == expected and not _index_warnings(again.stderr)
    checked = run_cq("index", "--root", str(root), env={"CQ_CACHE_DIR": str(cache)})
    assert "checked: " in checked.stdout and not checked.stderr, checked.stderr


def test_a_fifo_as_meta_json_never_blocks_a_search(built) -> None:  # type: ignore[no-untyped-def]
    root, cache, directory, expected = built
    (directory / "meta.json").unlink()
    os.mkfifo(directory / "meta.json")
    _assert_repaired(root, cache, expected)


def test_a_lost_manifest_never_keeps_a_deleted_files_functions(built_own) -> None:  # type: ignore[no-untyped-def]
    root, cache, directory, _ = built_own
    (directory / "manifest.msgpack").unlink()
    (root / "app/m7.py").unlink()
    expected = _answer(_search(root, cache.with_name("fresh"), "--no-cache"))
    run = _search(root, cache)
    assert _answer(run) == expected
    assert not any(f.startswith("app/m7.py") for f in _answer(run)[1])
    assert not any(file == "app/m7.py" for file, _, _ in _answer(run)[0])
    indexed = run_cq("index", "--root", str(root), env={"CQ_CACHE_DIR": str(cache)})
    assert "files: 29" in indexed.stdout and "documents: 145" in indexed.stdout, indexed.stdout


def test_cq_index_rebuilds_an_index_whose_manifest_is_lost(built_own) -> None:  # type: ignore[no-untyped-def]
    root, cache, directory, _ = built_own
    (directory / "manifest.msgpack").unlink()
    (root / "app/m7.py").unlink()
    run = run_cq("index", "--root", str(root), env={"CQ_CACHE_DIR": str(cache)})
    assert run.returncode == 0, run.stderr
    assert len(_index_warnings(run.stderr)) == 1, run.stderr
    assert "files: 29" in run.stdout and "documents: 145" in run.stdout, run.stdout


@pytest.mark.parametrize("where", ["index", "root"])
def test_a_file_where_the_index_dir_goes_is_replaced(built, where: str) -> None:  # type: ignore[no-untyped-def]
    """The cache's ``index`` dir, or the root's own index dir, is a file: the index is built
    again, once, with one warning, and nothing is left behind."""
    root, cache, directory, expected = built
    target = cache / "index" if where == "index" else directory
    subprocess.run(["rm", "-rf", str(target)], check=True)
    target.write_text("not a directory\n")
    _assert_repaired(root, cache, expected)
    assert sorted(p.name for p in directory.parent.iterdir()) == [directory.name]


def test_a_non_utf8_file_name_is_indexed_and_reported(tmp_path: Path) -> None:
    """A ``.py`` file named by bytes that are not UTF-8 is indexed by its bytes: its function
    is found, the report (markdown and JSON) names it with a visible escape, and the answer
    is ``--no-cache``'s."""
    root = _tree(tmp_path / "root", 3)
    odd = os.fsencode(root / "app") + b"/caf\xe9.py"
    with open(odd, "wb") as handle:
        handle.write(MODULE.format(i=99).encode())
    cache = tmp_path / "cache"
    expected = _answer(_search(root, tmp_path / "unused", "--no-cache"))
    assert "app/caf\udce9.py::handler_99" in expected[1]
    for _ in range(2):  # built, then read from the cache
        run = _search(root, cache)
        assert _answer(run) == expected and not run.stderr, run.stderr
    md = run_cq("search", "--root", str(root), "--", QUESTION, env={"CQ_CACHE_DIR": str(cache)})
    assert md.returncode == 0 and "`app/caf\\udce9.py::handler_99`" in md.stdout, md.stderr
    indexed = run_cq("index", "--root", str(root), env={"CQ_CACHE_DIR": str(cache)})
    assert indexed.returncode == 0 and "files: 4" in indexed.stdout, indexed.stderr


def _file_size_limited(limit: int) -> None:
    """Writes past ``limit`` bytes fail (EFBIG) as on a full disk, instead of killing cq."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def _run_limited(limit: int, *args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cq", *args],
        capture_output=True,  # pipes: not files, the limit leaves the report alone
        text=True,
        env={**os.environ, "CQ_CACHE_DIR": str(cache)},
        preexec_fn=lambda: _file_size_limited(limit),
        timeout=120,
    )


def test_a_full_disk_indexes_in_memory_with_one_warning(tmp_path: Path) -> None:
    # 150 modules: each of the index's files outgrows the 3,000-byte limit however tantivy's
    # writer threads share the documents out (30 made segments near the limit: a flaky test)
    root = _tree(tmp_path / "root", 150)
    expected = _answer(_search(root, tmp_path / "unused", "--no-cache"))
    cache = tmp_path / "cache"
    args = ("search", "--root", str(root), "--format", "json", *PATIENT, "--", QUESTION)
    run = _run_limited(3000, *args, cache=cache)
    assert run.returncode in (0, 1) and "Traceback" not in run.stderr, run.stderr
    assert "internal error" not in run.stderr, run.stderr
    data = json.loads(run.stdout)
    findings = [(f["file"], f["line"], f["tier"]) for f in data["findings"]]
    functions = next(s["functions"] for s in data["sections"] if s["type"] == "functions")
    assert (findings, [f["name"] for f in functions]) == expected
    (warning,) = _index_warnings(run.stderr)
    assert "File too large" in warning and "in memory" in warning
    indexed = _run_limited(3000, "index", "--root", str(root), cache=cache)
    assert indexed.returncode != 0 and "Traceback" not in indexed.stderr, indexed.stderr
    assert indexed.stderr.startswith("cq: ") and len(indexed.stderr.splitlines()) >= 1


@pytest.mark.parametrize("command", ["index", "search"])
def test_a_clear_in_the_middle_of_a_build_is_no_failure(tmp_path: Path, command: str) -> None:
    """``cq index --clear`` while ``cq index`` or a search builds (slowed down: 40 files at
    0.05 s each, cleared once the build has made its directory): the build goes on in a new
    directory, no traceback, and the answer is ``--no-cache``'s."""
    root = _tree(tmp_path / "root", 40)
    cache = tmp_path / "cache"
    env = {"CQ_CACHE_DIR": str(cache)}
    expected = _answer(_search(root, tmp_path / "unused", "--no-cache"))
    args = ["--root", str(root)]
    if command == "search":
        args += ["--format", "json", *PATIENT, "--", QUESTION]
    outcome: list = []
    building = threading.Thread(
        target=lambda: outcome.append(run_hooked("slow-index=0.05", command, *args, env=env))
    )
    building.start()
    # the build has begun when its directory is there (a clock was no sign of it under load)
    give_up = time.monotonic() + 300
    while not list(cache.glob("index/v*/*")) and building.is_alive():
        assert time.monotonic() < give_up, "the build never made its directory"
        time.sleep(0.02)
    cleared = run_cq("index", "--root", str(root), "--clear", env=env)
    building.join()
    assert cleared.returncode == 0, cleared.stderr
    (run,) = outcome
    assert run.returncode in (0, 1), run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    if command == "search":
        assert _answer(run) == expected
    else:
        assert "files: 40" in run.stdout, run.stdout
    assert _answer(_search(root, cache)) == expected


@pytest.mark.parametrize("command", ["index", "search"])
def test_an_index_cleared_just_before_its_writer_is_built_again(
    tmp_path: Path, command: str
) -> None:
    """The race above at its narrowest, made certain (``clear-before-writer``): the directory
    is removed after the build opened it and before it takes the writer. That is no writer
    held elsewhere: the build goes on in a new directory, and the search answers as
    ``--no-cache`` does (it answered from an empty index, with no findings and no warning)."""
    root = _tree(tmp_path / "root", 10)
    cache = tmp_path / "cache"
    expected = _answer(_search(root, tmp_path / "unused", "--no-cache"))
    args = ["--root", str(root)]
    if command == "search":
        args += ["--format", "json", *PATIENT, "--", QUESTION]
    run = run_hooked("clear-before-writer", command, *args, env={"CQ_CACHE_DIR": str(cache)})
    assert run.returncode in (0, 1), run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    if command == "search":
        assert _answer(run) == expected
    else:
        assert "files: 10" in run.stdout and "another cq process" not in run.stdout, run.stdout
    assert _answer(_search(root, cache)) == expected


def test_timeout_bounds_a_first_index_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first build slower than the question's wait (each file takes 3 s to prepare;
    ``--timeout`` 3 s, a profile waiting no longer than that): the search answers as
    ``--no-index`` does at its deadline, not after the build, says so in one line (and in the
    report), the files indexed before the deadline stay indexed, and the rest is built behind
    the search (``behind.py``): the next search finds the whole index."""
    root = _tree(tmp_path / "root", 40)
    (root / "nowait.toml").write_text("[index]\nquestion_wait_s = 0\n")
    cache = tmp_path / "cache"
    prepared = tmp_path / "prepared"  # each file the search's own (slowed) build prepared
    env = {"CQ_CACHE_DIR": str(cache)}
    args = ("search", "--root", str(root), "--format", "json", "--timeout", "3")
    args += ("--profile", str(root / "nowait.toml"), "--", QUESTION)
    expected = _answer(run_cq(*args[:-2], "--no-index", "--", QUESTION, env=env))
    run = run_hooked("slow-index=3", *args, env={**env, "CQ_TEST_PREPARED": str(prepared)})
    assert _answer(run) == expected
    (warning,) = _index_warnings(run.stderr)
    assert "--timeout" in warning
    assert "--timeout" in run.json()["summary"]["telemetry"]["index"]["unused"]
    # Answered at its deadline, not after the build: the search's process had prepared only
    # some of the 40 files when it ended (a condition, not a clock: however loaded the
    # machine, the build stops at the deadline between files, and the process ends without
    # waiting for it); the rest is left to behind.py, which has no slowed files.
    done = prepared.read_text().splitlines() if prepared.exists() else []
    assert len(done) < 40, len(done)
    monkeypatch.setenv("CQ_CACHE_DIR", str(cache))
    give_up = time.monotonic() + 300
    while len((indexed_files(root.resolve()) or ({}, 0))[0]) < 40:  # the builder behind it
        assert time.monotonic() < give_up, "the rest of the build never went on"
        time.sleep(0.5)
    patient = ("search", "--root", str(root), "--format", "json", *PATIENT, "--", QUESTION)
    follow = run_cq(*patient, env=env).json()  # not about the deadline: beside burners 3 s
    # were not enough to open the finished index
    assert follow["run"]["counters"].get("index.files_updated", 0) == 0
    assert follow["summary"]["telemetry"]["index"]["files"] == 40
