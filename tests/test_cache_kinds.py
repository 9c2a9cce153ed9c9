"""``cq cache`` accounts for every kind cq keeps in its cache dir: the database, the
repository indexes and the embedding vectors are listed, bounded by ``CQ_CACHE_MAX_MB`` and
removed by ``clear``; embedding models and agent install records are shown apart and kept;
files cq did not write are never touched; a running server goes on after a clear.

Real searches build the database and the indexes. The vectors are written by cq's own store
(``cq.embed.store.Store``) in the layout a build leaves; its ``put_vectors`` takes numpy
arrays, which the suite runs without, so ``_F32`` hands it the same float32 bytes.
"""

from __future__ import annotations

import array
import contextlib
import os
import random
import re
import sys
import time
from pathlib import Path

import pytest
from conftest import cache_settled, run_cq, word_tree, write_tree

from cq.cache.schema import FILE_NAME
from cq.embed.store import Store, UnitRef, store_path

MB = 1 << 20
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
QUESTION = "where is the record validated"


class _F32:
    """A vector as ``Store.put_vectors`` reads one: ``astype(...).tobytes()``."""

    def __init__(self, values: list[float]) -> None:
        self.values = values

    def astype(self, _kind: str) -> _F32:
        return self

    def tobytes(self) -> bytes:
        return array.array("f", self.values).tobytes()


def _vectors(units: int, model: str = MODEL, root: str = "/some/root") -> Path:
    """A model's store holding ``units`` 384-dimension vectors of one root, as a build
    leaves it; its directory."""
    store = Store(model)
    try:
        keys = [f"{i:032x}" for i in range(units)]
        refs = [UnitRef("a.py", f"f{i}", "function", i + 1, k) for i, k in enumerate(keys)]
        store.put_files(root, {"a.py": ("digest", refs)})
        rng = random.Random(units)
        store.put_vectors(keys, [_F32([rng.random() for _ in range(384)]) for _ in keys])
        store.mark_seen(root, 1)
    finally:
        store.close()
    return store_path(model).parent


def _ask(root: Path, **env: str) -> None:
    # A first index build cut by the search's --timeout (10 s: a loaded machine) goes on in a
    # detached process (cq/index/behind.py) that writes into the cache dir after cq exits,
    # while the test counts its bytes: the whole build stays inside this search.
    run = run_cq("search", QUESTION, "--root", str(root), "--timeout", "600", env=env)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr


def _bytes(directory: Path) -> int:
    """Bytes of the files below ``directory``, links not followed."""
    return sum(
        os.lstat(os.path.join(folder, name)).st_size
        for folder, _dirs, names in os.walk(directory)
        for name in names
    )


def _files(directory: Path) -> set[str]:
    return {
        os.path.relpath(os.path.join(folder, name), directory)
        for folder, dirs, names in os.walk(directory)
        for name in [*names, *dirs]
    }


def _mb(size: int) -> str:
    return f"{size / MB:.1f} MB"


def _index_of(cache: Path, root: Path) -> Path:
    (found,) = [d for d in cache.glob("index/v*/*") if (d / "root").read_text() == str(root)]
    return found


def _model(cache: Path, name: str) -> Path:
    """A model as ``cq embed fetch`` installs one: its files under ``embed/models``."""
    return write_tree(
        cache / "embed" / "models" / name.replace("/", "--"),
        {"model.safetensors": b"\0" * 50_000, "tokenizer.json": "{}", "config.json": "{}"},
    )


@pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)
def test_the_layout_cq_cache_knows_is_where_its_owners_write(_isolated_cache: Path) -> None:
    """``cq cache`` finds each kind by ``cq.cache.place``'s names; the modules that write
    them must agree, or a kind would go uncounted and uncleared."""
    from cq.cache import footprint, place
    from cq.embed.models import model_dir
    from cq.index.location import index_dir

    index = index_dir(Path("/some/root"))
    assert index.parent.parent == _isolated_cache / place.INDEXES
    assert footprint.is_root_name(index.name)
    embed = _isolated_cache / place.EMBED
    assert store_path(MODEL) == embed / MODEL.replace("/", "--") / place.VECTORS
    assert model_dir(MODEL).parent == embed / place.MODELS


# a real process: the bytes it leaves in the cache dir are under test (a forked cq's
# figures were seen 0.1 MB off at a rounding edge)
def test_info_lists_the_vectors_per_model_and_the_models_apart(
    tmp_path: Path, _isolated_cache: Path
) -> None:
    _ask(word_tree(tmp_path, 1))
    store = _vectors(300)
    other = _vectors(40, model="BAAI/bge-small-en-v1.5")
    model = _model(_isolated_cache, MODEL)
    before = _bytes(_isolated_cache) - _bytes(model)  # everything of cq's but the model
    info = run_cq("cache", "info")
    assert info.returncode == 0 and info.stderr == "", info.stderr
    lines = info.stdout.splitlines()
    assert f"embedding vectors: 2 models, {_mb(_bytes(store) + _bytes(other))}" in lines
    assert f"  {MODEL}: {_mb(_bytes(store))}" in {line.split(", last")[0] for line in lines}
    assert "  BAAI/bge-small-en-v1.5: " in info.stdout
    assert f"embedding models 1, {_mb(_bytes(model))}" in info.stdout
    after = _bytes(_isolated_cache) - _bytes(model)
    (head,) = [line for line in lines if line.startswith("cache dir:")]
    assert "(bound 512.0 MB); cache used " in head, head
    # to the rounding of one figure (0.05), between what the directory held before and after
    # (a cq that exits folds its log back into the database: test_a_cq_that_has_exited_...),
    # and the log its own reading holds while it counts (0.05: a clean-clone CI run counted
    # 1.1 MB for a directory of 1.048 MB before and after)
    said = float(head.rsplit("cache used ", 1)[1].removesuffix(" MB"))
    low, high = min(before, after) / MB, max(before, after) / MB
    assert low - 0.05 - 1e-9 <= said <= high + 0.1 + 1e-9, (head, before, after)


# real processes: what a cq leaves behind as it exits is under test (a forked cq closes its
# stores in forked_cli.py)
def test_a_cq_that_has_exited_leaves_no_log_beside_the_database(
    tmp_path: Path, _isolated_cache: Path
) -> None:
    """sqlite folds its log back and removes it and its shared memory when the last
    connection closes; a cq that left them (its connection never closed at exit) left 64 KB
    of shared memory that ``cq cache info``'s "cache used" does not count."""
    root = write_tree(tmp_path / "tree", {"a.py": "def target():\n    return 1\n"})
    for argv in (("search", "target", "--root", str(root)), ("cache", "info")):
        run = run_cq(*argv)
        assert run.returncode == 0 and run.stderr == "", run.stderr
        cache_settled(_isolated_cache)  # a search's writer stores its cache after it exits
        left = sorted(p.name for p in _isolated_cache.glob("*-[ws][ah][lm]"))
        assert left == [], (argv, left)


# a real process: the bytes it leaves in the cache dir are under test (a forked cq's
# figures were seen 0.1 MB off at a rounding edge)
def test_clear_removes_every_cache_kind_and_nothing_else(
    tmp_path: Path, _isolated_cache: Path
) -> None:
    cache = _isolated_cache
    _ask(word_tree(tmp_path, 2))
    _vectors(200)
    model = _model(cache, MODEL)
    outside = write_tree(tmp_path / "outside", {"v7/0123456789abcdef0123/keep.txt": "not cq's"})
    theirs = {  # the cache dir is a directory of the user's that holds other things too
        "notes.txt": "mine",
        "cq-notes.sqlite3": "not a cq store",
        "index/README": "mine",
        "index/v7/not-a-root/keep.txt": "mine",
        "embed/notes.txt": "mine",
        "embed/mine/data.bin": "mine",
        "agent/manifest-project-0123456789abcdef.json": "{}",
    }
    write_tree(cache, theirs)
    (cache / "index" / "v8").symlink_to(outside / "v7")  # a link is never followed
    before = _bytes(cache)
    assert list(cache.glob("index/v*/*")) and (cache / FILE_NAME).exists()

    cleared = run_cq("cache", "clear")
    assert cleared.returncode == 0 and cleared.stderr == "", cleared.stderr
    (line,) = cleared.stdout.splitlines()
    assert line.startswith(f"cleared {cache}: "), line
    # what it says it freed is what left the dir, to the rounding of one figure: sqlite folds
    # and removes its log and shared memory as the last connection closes, so a few KB move
    said = float(line.split(": ", 1)[1].split(" MB freed", 1)[0])
    assert abs(said - (before - _bytes(cache)) / MB) <= 0.1 + 1e-9, line
    assert "1 repository index" in line and "1 embedding vector store" in line

    left = _files(cache)
    assert not [f for f in left if "sqlite3" in f and f != "cq-notes.sqlite3"], left
    indexes = [d for d in cache.glob("index/v*/[0-9a-f]*") if not d.parent.is_symlink()]
    assert not indexes and not store_path(MODEL).exists()
    for name, text in theirs.items():
        assert (cache / name).read_text() == text, name
    assert (outside / "v7/0123456789abcdef0123/keep.txt").read_text() == "not cq's"
    assert (cache / "index" / "v8").is_symlink() and _bytes(model) > 50_000
    info = run_cq("cache", "info")
    assert "index: 0 roots" in info.stdout and "embedding vectors: 0 models" in info.stdout
    assert "embedding models 1," in info.stdout and "agent install records 1" in info.stdout


@pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)
def test_the_bound_covers_the_vectors_least_recently_used_first(
    tmp_path: Path, _isolated_cache: Path
) -> None:
    """The indexes and the vectors share the bound's second half: an index older than the
    vectors goes first; vectors no question read for an hour go before newer indexes."""
    cache = _isolated_cache
    trees = [word_tree(tmp_path, n) for n in range(10, 14)]
    _ask(trees[0])
    index = _bytes(_index_of(cache, trees[0]))
    store = _vectors(int(1.5 * index / 1600))  # ~1.5 indexes' worth
    vectors = _bytes(store)
    share = index + vectors + 1.5 * index  # room for the vectors and 2.5 indexes
    bound = {"CQ_CACHE_MAX_MB": f"{2 * share / MB:.3f}"}

    time.sleep(0.05)  # the next index is used after the vectors were written
    _ask(trees[1], **bound)
    assert _index_of(cache, trees[0]).exists() and store.exists()
    _ask(trees[2], **bound)  # one index too many: the oldest item goes, the first index
    assert [_index_of(cache, t).exists() for t in trees[1:3]] == [True, True]
    assert not [d for d in cache.glob("index/v*/*") if (d / "root").read_text() == str(trees[0])]
    assert store_path(MODEL).exists()

    hour_ago = time.time() - 3600  # no question read the vectors since
    os.utime(store_path(MODEL), (hour_ago, hour_ago))
    _ask(trees[3], **bound)
    assert not store.exists()  # now the least recently used item
    assert [_index_of(cache, t).exists() for t in trees[1:]] == [True, True, True]
    assert _bytes(cache) <= 1.1 * 2 * share


@pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)
def test_prune_removes_vectors_over_the_bound(_isolated_cache: Path) -> None:
    store = _vectors(800)  # ~1.3 MB, over the 0.5 MB half of a 1 MB bound
    pruned = run_cq("cache", "prune", env={"CQ_CACHE_MAX_MB": "1"})
    assert pruned.returncode == 0 and pruned.stderr == "", pruned.stderr
    assert "1 embedding vector stores removed" in pruned.stdout
    assert not store.exists()


@pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)
def test_vectors_a_build_is_writing_are_kept_and_said(_isolated_cache: Path) -> None:
    """A build holds its root's lock while it writes (``cq.embed.build``'s own lock, held
    here): clear and prune leave its store alone, so its work does not go on into removed
    files; once it is done, clear removes it."""
    from cq.embed.build import _root_lock

    store = _vectors(800)
    with _root_lock(MODEL, "/some/root") as held:
        assert held
        pruned = run_cq("cache", "prune", env={"CQ_CACHE_MAX_MB": "1"})
        assert "0 embedding vector stores removed" in pruned.stdout and store_path(MODEL).exists()
        info = run_cq("cache", "info")
        assert f"  {MODEL} (a build is writing it): " in info.stdout
        cleared = run_cq("cache", "clear")
        assert cleared.returncode == 0 and store_path(MODEL).exists()
        assert cleared.stdout.endswith(f"; kept the vectors of {MODEL} (a build is writing them)\n")
    cleared = run_cq("cache", "clear")
    assert "1 embedding vector store" in cleared.stdout and not store.exists()


@pytest.mark.skipif(sys.platform != "linux", reason="the server is Linux only")
@pytest.mark.cli_forked  # forked clients of a real server (as tests/test_server.py's)
def test_a_running_server_answers_the_same_after_clear_and_keeps_no_removed_file(
    tmp_path: Path, _isolated_cache: Path
) -> None:
    """The server's search process holds the database open between searches: a clear then
    empties it rather than removing files the server holds (``cq.cache.sharing``); the
    server answers as before, writes what a new tree's search stores where other cq
    processes see it, and holds no removed file open (its disk space would stay taken until
    the server exits)."""
    import tempfile

    from test_server import _children, _dir, _env, _report, _stop_all

    repo = word_tree(tmp_path, 20)
    runtime = Path(tempfile.mkdtemp(prefix="cqs", dir="/tmp"))
    try:
        assert run_cq("server", "start", env=_env(runtime)).returncode == 0
        ask = ("search", QUESTION, "--root", str(repo))
        first = run_cq(*ask, env=_env(runtime))
        assert first.returncode == 0, first.stderr
        cleared = run_cq("cache", "clear")
        assert cleared.returncode == 0, cleared.stderr
        emptied = run_cq("cache", "info").stdout
        assert re.search(r"^entries: 0,", emptied, re.M), emptied
        again = run_cq(*ask, env=_env(runtime))
        assert _report(again) == _report(first)
        other = run_cq(
            "search", QUESTION, "--root", str(word_tree(tmp_path, 21)), env=_env(runtime)
        )
        assert other.returncode == 0, other.stderr
        # the subcommands alone say how things are: ``cq server`` the status, ``cq cache``
        # the info
        status = run_cq("server", env=_env(runtime)).stdout
        assert re.search(r"\b3 searches served", status), status  # all went through it
        info = run_cq("cache")
        assert info.returncode == 0 and "index: 2 roots" in info.stdout
        entries = int(re.search(r"^entries: (\d+),", info.stdout, re.M).group(1))  # type: ignore[union-attr]
        assert entries > 0, info.stdout  # the server's writes reach the new database
        from cq.server.lifecycle import lock_holder

        server = lock_holder(_dir(runtime))
        assert server is not None
        removed = []
        for pid in {server, *_children(server)}:
            with contextlib.suppress(OSError):
                for fd in os.listdir(f"/proc/{pid}/fd"):
                    with contextlib.suppress(OSError):
                        target = os.readlink(f"/proc/{pid}/fd/{fd}")
                        if target.startswith(str(_isolated_cache)) and "(deleted)" in target:
                            removed.append(target)
        assert not removed, removed
    finally:
        _stop_all(runtime / "cq")
        import shutil

        shutil.rmtree(runtime, ignore_errors=True)


def test_cq_help_names_the_cache_actions_cq_cache_takes() -> None:
    """``cq --help`` said "show, shrink or clear the persistent cache", and ``cq cache show``
    was refused: the summary names the actions as ``cq cache`` spells them."""
    line = next(s for s in run_cq("--help").stdout.splitlines() if s.strip().startswith("cache"))
    words = set(re.findall(r"\w+", line))
    assert {"info", "prune", "clear"} <= words, line
