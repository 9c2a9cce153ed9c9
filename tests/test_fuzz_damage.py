"""Property-based fuzz of ``cq search``'s command line and of damaged index directories.

Hypothesis draws argument lists from every search flag with hostile values (numbers out of
range, paths leading out, globs with ``..``, junk), and damage to a built repository index in
the cache dir (a file truncated, overwritten with noise, a bit flipped, zeroed, emptied,
deleted or replaced by a directory or a FIFO; a writer lock held by a live process). Each
example runs the real CLI (``python -m cq``). Properties: exit 0, 1 or 2; exit 2 is one
``cq: ...`` line; never a traceback, never a hang. A damaged index is found and rebuilt (or
read as last committed when the damage touched nothing it reads), so the question is
answered as a clean index answers it, findings and Relevant Functions alike.

Derandomized with a fixed budget (no example database), so CI runs the same examples.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from tests.conftest import fuzz_examples, run_cq, scratch, write_tree
from tests.test_index import QUESTION, SETTINGS, STORAGE

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

_FUZZ = settings(
    max_examples=fuzz_examples(5),
    derandomize=True,
    database=None,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: each example is a real cq run
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
_TREE = {
    "app/conf/global_settings.py": SETTINGS,
    "app/files/storage.py": STORAGE,
    "src/lib.rs": "pub fn parse(s: &str) -> usize {\n    s.len()\n}\n",
}
_JUNK = st.sampled_from(["", "-1", "0", "nan", "inf", "1e999", "9" * 30, "..", "/", "x\ty"])
_TEXT = st.one_of(_JUNK, st.text(min_size=0, max_size=12))
_FLAG = st.one_of(
    st.tuples(st.sampled_from(["--limit", "--max-files", "--max-matches-per-file"]), _TEXT),
    st.tuples(st.sampled_from(["--max-total-matches", "--max-depth", "--max-filesize"]), _TEXT),
    st.tuples(st.just("--timeout"), _TEXT),
    st.tuples(st.sampled_from(["--include", "--exclude"]), st.one_of(_TEXT, st.just("/*.py"))),
    st.tuples(st.just("--in"), st.one_of(_TEXT, st.sampled_from(["app", "../..", "/etc"]))),
    st.tuples(st.just("--lang"), st.one_of(_TEXT, st.sampled_from(["python", "rust"]))),
    st.tuples(st.just("--focus"), st.one_of(_TEXT, st.sampled_from(["tests", "all"]))),
    st.tuples(st.just("--profile"), st.one_of(_TEXT, st.sampled_from(["audit", "p.toml"]))),
    st.tuples(st.just("--format"), st.one_of(_TEXT, st.sampled_from(["md", "json"]))),
    st.tuples(st.just("--context"), _TEXT),
    st.tuples(
        st.sampled_from(
            [
                *("--regex", "--literal", "--identifier", "--rewrite", "--no-rewrite"),
                *("--explain", "--hidden", "--no-ignore", "--ignore-case", "--no-cache"),
                "--no-index",
            ]
        ),
        st.none(),
    ),
)


def _assert_clean_exit(run) -> None:  # type: ignore[no-untyped-def]
    assert run.returncode in (0, 1, 2), run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    if run.returncode == 2:
        assert run.stderr.startswith("cq: ") and len(run.stderr.splitlines()) == 1, run.stderr


@_FUZZ
@given(
    query=st.one_of(st.sampled_from(["parse", "where are settings read?"]), _TEXT),
    flags=st.lists(_FLAG, max_size=4),
)
def test_fuzzed_search_arguments(query: str, flags: list[tuple[str, str | None]]) -> None:
    with tempfile.TemporaryDirectory(dir=scratch()) as tmp:
        root = write_tree(Path(tmp) / "root", _TREE)
        argv = ["search", "--root", str(root)]
        for flag, value in flags:
            argv += [flag] if value is None else [f"{flag}={value}"]
        run = run_cq(*argv, "--", query)
    _assert_clean_exit(run)


# -- damaged index directories ----------------------------------------------------------------

_TARGETS = [
    "meta.json",
    "manifest.msgpack",
    "root",
    ".managed.json",
    ".tantivy-meta.lock",
    ".tantivy-writer.lock",
    "*.store",
    "*.idx",
    "*.term",
    "*.pos",
    "*.fast",
    "*.fieldnorm",
]
_DAMAGE = st.tuples(
    st.sampled_from(_TARGETS),
    st.sampled_from(["truncate", "noise", "flip", "zero", "empty", "delete", "directory", "fifo"]),
    st.floats(min_value=0, max_value=1),
    st.binary(min_size=1, max_size=64),
)


# Twenty near-twins of the storage module: BM25 ranks them by small differences, so damage
# that changes any document's statistics shows in the order of files and functions.
_UPLOADS = {
    f"app/uploads/upload_{i:02d}.py": STORAGE.replace("FileSystem", f"Upload{i:02d}")
    + f"\n\ndef set_permissions_{i}(path):\n    return os.chmod(path, {i}{'0' * (i % 4)})\n"
    for i in range(20)
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str]]:
    """A tree, its cache dir with a built index, and the clean answer's file order."""
    base = tmp_path_factory.mktemp("damage")
    root = write_tree(base / "root", _TREE | _UPLOADS)
    cache = base / "cache"
    env = {"CQ_CACHE_DIR": str(cache)}
    assert run_cq("index", "--root", str(root), env=env).returncode == 0
    return root, cache, _answer(root, cache)


def _answer(root: Path, cache: Path) -> list[str]:
    run = run_cq(
        *("search", "-", "--root", str(root), "--format", "json"),
        stdin=QUESTION,
        env={"CQ_CACHE_DIR": str(cache)},
    )
    _assert_clean_exit(run)
    assert run.returncode == 0, run.stderr
    data = run.json()
    functions = next((s["functions"] for s in data["sections"] if s["type"] == "functions"), [])
    return [f["file"] for f in data["findings"]] + [f["name"] for f in functions]


def _damage(directory: Path, target: str, how: str, where: float, noise: bytes) -> None:
    for path in sorted(directory.glob(target)):
        if how in ("delete", "directory", "fifo"):
            path.rmdir() if path.is_dir() else path.unlink()
            if how == "directory":
                path.mkdir()
            elif how == "fifo":
                os.mkfifo(path)
        elif not path.is_file():  # an earlier damage made it a directory or a FIFO
            continue
        elif how == "empty":
            path.write_bytes(b"")
        else:
            data = bytearray(path.read_bytes())
            at = min(int(len(data) * where), max(len(data) - 1, 0))
            if how == "truncate":
                del data[at:]
            elif how == "flip" and data:
                data[at] ^= 1 << (noise[0] % 8)
            elif how == "zero":
                data[at : at + len(noise)] = bytes(len(noise))
            else:
                data[at : at + len(noise)] = noise
            path.write_bytes(bytes(data))


@settings(_FUZZ, max_examples=fuzz_examples(6))
@given(damages=st.lists(_DAMAGE, min_size=1, max_size=3))
@example(damages=[("meta.json", "fifo", 0.0, b"\0")])  # blocked tantivy's open for good
@example(damages=[("*.fieldnorm", "flip", 0.7, b"\6")])  # silently changed the ranking
@example(damages=[("*.idx", "zero", 0.0, bytes(64))])  # unseen by `cq index`
def test_a_damaged_index_is_rebuilt_or_read_as_committed(
    built: tuple[Path, Path, list[str]], damages: list[tuple[str, str, float, bytes]]
) -> None:
    root, clean_cache, clean = built
    with tempfile.TemporaryDirectory(dir=scratch()) as tmp:
        cache = Path(tmp) / "cache"
        shutil.copytree(clean_cache, cache)
        (directory,) = (cache / "index").glob("v*/*")
        for damage in damages:
            _damage(directory, *damage)
        assert _answer(root, cache) == clean  # rebuilt, or read as committed: the clean answer


def test_a_held_writer_lock_leaves_the_search_reading_the_last_commit(tmp_path: Path) -> None:
    """Another live process holds the index's writer (as a long ``cq index`` would) while the
    tree changes: the search waits its bounded time, then answers from the last commit
    (writing nothing); the next search, the lock released, brings the index up to date."""
    root = write_tree(tmp_path / "root", _TREE)
    cache = tmp_path / "cache"
    assert run_cq("index", "--root", str(root), env={"CQ_CACHE_DIR": str(cache)}).returncode == 0
    (directory,) = (cache / "index").glob("v*/*")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, tantivy\n"
            "from cq.index.schema import build_schema\n"
            "index = tantivy.Index(build_schema(), path=sys.argv[1], reuse=True)\n"
            "writer = index.writer()\n"
            "print('held', flush=True)\n"
            "sys.stdin.read()\n",
            str(directory),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    (root / "app/files/uploads.py").write_text("UPLOAD_MODE = 0o644\n")
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        locked = _search_json(root, cache)
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=300)
    assert locked["run"]["counters"].get("index.files_updated", 0) == 0  # 0: not shown
    assert locked["findings"][0]["file"] == "app/conf/global_settings.py"
    freed = _search_json(root, cache)
    assert freed["run"]["counters"]["index.files_updated"] == 1


def _search_json(root: Path, cache: Path) -> dict:
    run = run_cq(
        *("search", "-", "--root", str(root), "--format", "json"),
        stdin=QUESTION,
        env={"CQ_CACHE_DIR": str(cache)},
    )
    _assert_clean_exit(run)
    return run.json()
