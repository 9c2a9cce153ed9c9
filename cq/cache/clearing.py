"""``cq cache clear``: remove every cache kind, and only cq's own files.

A user clears the cache to take its room back or to start afresh, so every kind goes: the
database (removed unopened, so a damaged one goes too: ``place.remove_files``; emptied
through sqlite instead while another cq has it open, ``sharing.py`` says why), every repository
index, every embedding vector store and the Pyrefly scratch untouched for a day (a live
Pyrefly server's view is in use: it goes with its server). Not the user's own things that
share the dir (embedding models, ``cq agent install``'s records), and nothing cq did not
name: ``CQ_CACHE_DIR`` may be a directory holding other files, so only the names of
``place.py``'s layout are removed, links are never followed, an index directory (named by
its root's hash) goes whole and any other directory only once it is empty.

What may be running meanwhile: a search or the per-user server's search processes, which
hold the database open (it is then emptied, not removed), open an index (each removal
renames the directory first: a search finds it whole or not at all, and builds a new one)
or read vectors (a search opens them once and copes with their absence); and an embedding
build, whose store is left alone while it holds its lock (``Cleared.busy``), so its work
does not go on into unlinked files.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import msgspec

from cq.cache import footprint, schema, sharing
from cq.cache.place import EMBED, INDEXES, SCRATCH, remove_files

_LEFTOVER = (".cleared.", ".broken.")  # index dirs renamed aside by a removal that stopped


class Cleared(msgspec.Struct, frozen=True):
    """What ``clear`` freed, per kind, and the vector stores a running build kept."""

    database: int
    indexes: int
    index_bytes: int
    vectors: int
    vector_bytes: int
    scratch_bytes: int
    busy: tuple[str, ...]  # models whose store a build is writing
    failed: str | None  # why a database file stayed

    @property
    def freed(self) -> int:
        return self.database + self.index_bytes + self.vector_bytes + self.scratch_bytes


def clear(cache: Path) -> Cleared:
    """Remove the database, the indexes, the vector stores not being built and stale
    scratch from ``cache``; never raises for a file that stays (it is not counted)."""
    path = cache / schema.FILE_NAME
    before = _database_bytes(cache)
    with sharing.alone(path) as alone:
        failed = remove_files(path, live=alone)
    if not alone:
        failed = failed or _empty(path)
    database = before - _database_bytes(cache)

    index_bytes, indexes = 0, 0
    for directory in footprint.index_dirs(cache):
        size = footprint.tree_size(directory)
        footprint.remove_index(directory)
        if not directory.exists():
            indexes += 1
            index_bytes += size - footprint.tree_size(directory)
    index_bytes += _leftovers(cache)

    vector_bytes, vectors, busy = 0, 0, []
    for directory in footprint.vector_dirs(cache):
        size = footprint.tree_size(directory)
        if footprint.remove_vectors(directory):
            vectors += 1
            vector_bytes += size - footprint.tree_size(directory)
        else:
            busy.append(directory.name.replace("--", "/", 1))

    with contextlib.suppress(OSError):
        (cache / EMBED).rmdir()  # emptied (models keep it)
    scratch = cache / SCRATCH
    size = footprint.tree_size(scratch)
    footprint.drop_stale_scratch(scratch)
    return Cleared(
        database=database,
        indexes=indexes,
        index_bytes=index_bytes,
        vectors=vectors,
        vector_bytes=vector_bytes,
        scratch_bytes=size - footprint.tree_size(scratch),
        busy=tuple(busy),
        failed=failed,
    )


def _empty(path: Path) -> str | None:
    """Empty the store through sqlite (another cq has its files open: ``sharing``); why
    not, when it could not be."""
    from cq.cache.store import Store

    store = Store(path, warn=False)
    try:
        store.empty()
        return None if store.notice is None else store.fault or store.notice
    finally:
        store.close()


def _database_bytes(cache: Path) -> int:
    """The bytes of every file ``remove_files`` removes (this cq's and an older one's store,
    their logs, shared memory and set-aside copies)."""
    path = cache / schema.FILE_NAME
    bases = [*schema.files(path), *schema.files(path.with_name(schema.LEGACY_NAME))]
    total = 0
    for base in bases:
        for victim in (base, Path(f"{base}.corrupt")):
            with contextlib.suppress(OSError):
                total += victim.stat().st_size
    return total


def _leftovers(cache: Path) -> int:
    """Remove what earlier removals left under ``index/`` (markers, renamed directories) and
    the directories emptied; their bytes."""
    freed = 0
    base = cache / INDEXES
    for version in footprint.version_dirs(cache):
        with contextlib.suppress(OSError), os.scandir(version) as listing:
            for entry in list(listing):
                name = entry.name
                if not footprint.is_root_name(name.split(".")[0]):
                    continue
                if entry.is_dir(follow_symlinks=False) and any(m in name for m in _LEFTOVER):
                    freed += footprint.tree_size(Path(entry.path))
                    footprint.remove_index(Path(entry.path))
                elif entry.is_file(follow_symlinks=False) and name.endswith(".too-large"):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)
        with contextlib.suppress(OSError):
            version.rmdir()
    with contextlib.suppress(OSError):
        base.rmdir()
    return freed
