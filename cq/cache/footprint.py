"""The cache dir's other tenants, kept to their share: repository indexes, embedding vectors
and Pyrefly's scratch.

``CQ_CACHE_MAX_MB`` bounds cq's cache kinds: the database with its WAL keeps to one half
(``bound.database_share``); the repository indexes (``index/v<schema>/<root hash>/``, one
directory per root, owned by ``cq.index``), the embedding vectors (``embed/<model>/``, one
store per model, owned by ``cq.embed``) and Pyrefly's scratch dir (``pyrefly-tmp``) share the
other. Halves because the database and the indexes grew alike where it was measured: 28 roots
searched with questions left 120 MB of indexes beside a 93 MB database.

One least-recently-used policy over that half, not a third share for the vectors: they exist
only for a user who turned the optional dense signal on, so a fixed share would take room
from every other user's indexes for nothing, while a user with embeddings keeps them as long
as questions read them. A vector store is one item, not split by root: its vectors are keyed
by content and shared by every root and checkout that holds the same code, so no root owns
them. An item's last use is its modification time: an index directory's is set each time a
search opens the index (``used``) and tantivy's writes move it too; a vector store's file is
set by each search that reads it and moved by each build's writes. So no record of its own
has to be kept (or can go stale).

After a search wrote an index, and after a build wrote vectors, ``trim`` runs: the indexes of
roots that no longer exist go first, then the least recently used items until the share
holds; the item just used is never removed by its own writer (one larger than the share stays
while it is the newest), nor a vector store a build is writing (its lock is held: removing
the files would only send its work into unlinked files). Scratch files untouched for a day
go too. Each removal is a whole item, as ``cq index --clear`` removes one index.

Embedding models (``embed/models/``, ``cq embed fetch``) and ``cq agent install``'s records
(``agent/``) are the user's, not cache: counted apart (``Kept``), never bounded or removed.

In: the cache dir and its bound. Out: ``Footprint`` (what ``cq cache info`` lists) and
removals. The walk costs a stat per file, too much for every search (its cost:
bench/results/2026-11-29-figures-from-cq.md), so it runs only after a write, in the
writer's own thread or process, and at ``cq cache prune``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec

from cq.cache import bound as store_bound
from cq.cache.place import (
    AGENT,
    EMBED,
    INDEXES,
    MODELS,
    SCRATCH,
    VECTORS,
    cache_dir,
    max_bytes_from_env,
)

_ROOT_FILE = "root"  # the index's note of the tree it covers
_MARKER = ".too-large"  # a root found too large to index during a search
_VERSION = re.compile(r"v\d+")  # index/v<schema>
_ROOT_DIR = re.compile(r"[0-9a-f]{20}")  # blake2b-80 of the root path (cq.index.location)
_BUILD_LOCK = re.compile(r"build-[0-9a-f]{20}\.lock")  # one per root building (cq.embed.build)
_VECTOR_FILES = (VECTORS, f"{VECTORS}-wal", f"{VECTORS}-shm")  # the database first
SCRATCH_AGE = 24 * 3600  # s: a scratch file untouched this long belongs to no live server


class RootUse(msgspec.Struct, frozen=True):
    """One root's index: where, how large, last used, and whether the tree still exists."""

    directory: str
    root: str  # "" when the index has not named its tree yet
    size: int
    used: float  # seconds since the epoch
    gone: bool


class VectorUse(msgspec.Struct, frozen=True):
    """One model's vector store: where, how large, last used, and whether a build writes it."""

    directory: str
    model: str  # owner/name, as the directory spells it
    size: int
    used: float
    busy: bool


class Kept(msgspec.Struct, frozen=True):
    """What lives in the cache dir but is the user's: never bounded, pruned or cleared."""

    models: int
    model_bytes: int
    agent_records: int


class Footprint(msgspec.Struct, frozen=True):
    """The indexes, vectors and scratch (most recently used first), and what is kept."""

    roots: tuple[RootUse, ...]
    vectors: tuple[VectorUse, ...]
    scratch: int
    kept: Kept

    @property
    def indexes(self) -> int:
        return sum(r.size for r in self.roots)

    @property
    def total(self) -> int:
        """Bytes against the share: indexes, vectors and scratch."""
        return self.indexes + self.scratch + sum(v.size for v in self.vectors)


def scan(cache: Path) -> Footprint:
    """Every root's index and model's vectors under ``cache``, the scratch dir's size and what
    is kept; never raises, never follows a link out of ``cache``."""
    roots = [_root_use(d) for d in index_dirs(cache)]
    roots.sort(key=lambda r: (-r.used, r.directory))
    vectors = [_vector_use(d) for d in vector_dirs(cache)]
    vectors.sort(key=lambda v: (-v.used, v.directory))
    models = list(_real_dirs(cache / EMBED / MODELS))
    agent = [p for p in _real_files(cache / AGENT) if p.name.startswith("manifest-")]
    kept = Kept(len(models), sum(_tree_size(m) for m in models), len(agent))
    return Footprint(tuple(roots), tuple(vectors), _tree_size(cache / SCRATCH), kept)


def used(directory: Path, wrote: bool) -> None:
    """A search opened the index at ``directory`` (in the cache dir): mark it used now and,
    when it ``wrote`` to it (only a write makes the indexes grow), keep the indexes, vectors
    and scratch to their share of ``CQ_CACHE_MAX_MB``. Never raises: a cache dir that cannot
    be trimmed is left as it is."""
    with contextlib.suppress(OSError):
        os.utime(directory)
    if wrote:
        with contextlib.suppress(OSError):
            trim(cache_dir(), max_bytes_from_env(), keep=directory)


def trim(cache: Path, total_bound: int, keep: Path | None = None) -> list[RootUse | VectorUse]:
    """Remove stale scratch, the indexes of roots that are gone, then the least recently
    used indexes and vector stores until the rest fit ``bound.others_share(total_bound)``;
    never ``keep`` (an index or vector store directory) nor a store a build is writing.
    Returns what was removed."""
    share = store_bound.others_share(total_bound)
    drop_stale_scratch(cache / SCRATCH)
    footprint = scan(cache)
    kept = str(keep) if keep is not None else None
    removed: list[RootUse | VectorUse] = []
    total = footprint.total
    items: list[RootUse | VectorUse] = [*footprint.roots, *footprint.vectors]
    for item in sorted(items, key=lambda i: (not _gone(i), i.used, i.directory)):
        if item.directory == kept or (not _gone(item) and total <= share):
            continue
        if isinstance(item, VectorUse):
            if item.busy or not remove_vectors(Path(item.directory)):
                continue
        else:
            remove_index(Path(item.directory))
        removed.append(item)
        total -= item.size
    return removed


def version_dirs(cache: Path) -> list[Path]:
    """The index schema directories (``index/v<n>``), real directories only."""
    return [v for v in _real_dirs(cache / INDEXES) if _VERSION.fullmatch(v.name)]


def index_dirs(cache: Path) -> list[Path]:
    """The root index directories (``index/v<n>/<hash>``), real directories only."""
    return [d for v in version_dirs(cache) for d in _real_dirs(v) if is_root_name(d.name)]


def is_root_name(name: str) -> bool:
    """Whether ``name`` is a root index directory's (the hash ``cq.index.location`` gives)."""
    return bool(_ROOT_DIR.fullmatch(name))


def vector_dirs(cache: Path) -> list[Path]:
    """The vector store directories (``embed/<model>/`` holding cq's files), real ones only."""
    return [
        d
        for d in _real_dirs(cache / EMBED)
        if d.name != MODELS and any(_vector_file(p.name) for p in _real_files(d))
    ]


def remove_index(directory: Path) -> None:
    """Remove one index directory and its too-large marker; renamed first, so a search
    opening it meanwhile finds it whole or not at all."""
    aside = directory.with_name(f"{directory.name}.cleared.{os.getpid()}")
    try:
        directory.rename(aside)
    except OSError:
        aside = directory
    shutil.rmtree(aside, ignore_errors=True)
    with contextlib.suppress(OSError):
        directory.with_name(directory.name + _MARKER).unlink(missing_ok=True)


def remove_vectors(directory: Path) -> bool:
    """Remove a vector store's files (the database before its log and shared memory: a
    process opening it meanwhile starts an empty one and drops a stale log) and its directory
    when nothing else is in it; False when a build holds it."""
    if _building(directory):
        return False
    names = [*_VECTOR_FILES, *(p.name for p in _real_files(directory) if _vector_file(p.name))]
    for name in dict.fromkeys(names):
        with contextlib.suppress(OSError):
            (directory / name).unlink()
    with contextlib.suppress(OSError):
        directory.rmdir()
    return True


def drop_stale_scratch(scratch: Path) -> None:
    """Remove what no Pyrefly server touched for ``SCRATCH_AGE`` (a killed one's files)."""
    before = time.time() - SCRATCH_AGE
    with contextlib.suppress(OSError):
        for entry in os.scandir(scratch):
            with contextlib.suppress(OSError):
                if entry.stat(follow_symlinks=False).st_mtime >= before:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)


def tree_size(directory: Path) -> int:
    """Bytes of the files below ``directory`` (0 when it is missing; links not followed)."""
    return _tree_size(directory)


def _gone(item: RootUse | VectorUse) -> bool:
    return isinstance(item, RootUse) and item.gone


def _vector_file(name: str) -> bool:
    return name in _VECTOR_FILES or bool(_BUILD_LOCK.fullmatch(name))


def _building(directory: Path) -> bool:
    """Whether a build holds one of the store's root locks (``cq.embed.build``)."""
    for lock in _real_files(directory):
        if not _BUILD_LOCK.fullmatch(lock.name):
            continue
        try:
            fd = os.open(lock, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        finally:
            os.close(fd)  # closing lets go of the lock taken to look
    return False


def _real_dirs(directory: Path) -> Iterator[Path]:
    """The directories in ``directory`` (itself not a link), links to elsewhere left out."""
    yield from _entries(directory, dirs=True)


def _real_files(directory: Path) -> Iterator[Path]:
    yield from _entries(directory, dirs=False)


def _entries(directory: Path, dirs: bool) -> Iterator[Path]:
    if not directory.is_dir() or directory.is_symlink():
        return
    with contextlib.suppress(OSError), os.scandir(directory) as listing:
        for entry in sorted(listing, key=lambda e: e.name):
            with contextlib.suppress(OSError):
                wanted = entry.is_dir if dirs else entry.is_file
                if wanted(follow_symlinks=False):
                    yield Path(entry.path)


def _root_use(directory: Path) -> RootUse:
    try:
        root = (directory / _ROOT_FILE).read_text(errors="surrogateescape").strip()
    except (OSError, ValueError):
        root = ""
    try:
        used_at = directory.stat().st_mtime
    except OSError:
        used_at = 0.0
    gone = bool(root) and not os.path.isdir(root)
    return RootUse(str(directory), root, _tree_size(directory), used_at, gone)


def _vector_use(directory: Path) -> VectorUse:
    used_at = 0.0
    for name in _VECTOR_FILES[:2]:  # a build's writes land in the log first
        with contextlib.suppress(OSError):
            used_at = max(used_at, (directory / name).stat().st_mtime)
    model = directory.name.replace("--", "/", 1)
    return VectorUse(str(directory), model, _tree_size(directory), used_at, _building(directory))


def _tree_size(directory: Path) -> int:
    total = 0
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False):
                    total += _tree_size(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
    return total
