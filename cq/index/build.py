"""Bring a root's index up to date: replace the documents of what moved (``changes.py``).

In: a root. Out: an opened index reflecting the tree, and an ``IndexUpdate`` saying what it
cost. Tantivy allows one writer per index: a process that cannot get the writer lock within
``index.lock_wait_s`` seconds (another search is updating the same root) reads the index as
last committed instead. An index is checked before it is opened and rebuilt when damaged
(``opening.py``); a search's deadline stops a build between files, committing the part built.
The numbers are ``Tuning.index``'s (``cq/model/index_tuning.py``).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from cq.cache import footprint
from cq.index.changes import Changes, Over
from cq.index.integrity import Damage, read_regular, seal
from cq.index.keys import path_key, readable
from cq.index.location import drop_other_versions, index_dir
from cq.index.manifest import Manifest, read_manifest, write_manifest
from cq.index.opening import MANIFEST, in_memory, open_index
from cq.index.rows import Row, prepared_rows
from cq.model.index_tuning import IndexTuning
from cq.parse import Listing

# Indexing threads: one per core, up to four. Tantivy gives each thread a segment of its own
# and documents go to whichever thread is free, so the documents' addresses differ from build
# to build; nothing read from the index depends on them (``query.py`` orders equal scores by
# path, and BM25's statistics are the whole index's, not a segment's). Tokenizing and
# committing are most of a build's CPU seconds (the moto tree, 22 MB: 2.1 of 4.0 CPU-s with
# one thread), and they are what the threads share.
WRITER_THREADS_MAX = 4


def writer_threads() -> int:
    """Tantivy's indexing threads for this machine: the cores cq may run on, up to four."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, WRITER_THREADS_MAX))


class IndexUpdate(msgspec.Struct, frozen=True, kw_only=True):
    """What one update found and did."""

    files: int = 0  # files in the index after the update
    documents: int = 0  # documents (files and units) in the index
    files_updated: int = 0  # added or changed files re-indexed
    files_removed: int = 0
    files_read: int = 0  # files read and hashed; the others' digests were known by stat
    files_pooled: int = 0  # of the updated files, those whose rows worker processes prepared
    source_bytes: int = 0  # bytes of the indexed files
    milliseconds: float = 0.0
    stale: bool = False  # another process held the writer: read as last committed
    partial: bool = False  # the deadline came first: some files wait for the next update
    notice: str = ""  # what was wrong with the index on disk and what was done about it
    checked: int = 0  # segment files found as last committed before the update


class OpenIndex:
    """An opened index of one root (tantivy ``Index``) and its manifest."""

    def __init__(self, root: Path, index: Any, manifest: Manifest) -> None:
        self.root, self.index, self.manifest = root, index, manifest


Progress = Callable[[str], None]


class Deferred(Exception):
    """A first build too large for a search to wait for: left to ``behind.py``'s process."""

    def __init__(self, source_bytes: int) -> None:
        super().__init__(f"{source_bytes} bytes to index")
        self.source_bytes = source_bytes


class TooLarge(Exception):
    """More source to index than a search builds on its own (``cq index`` builds it): more
    than ``limit`` bytes. Not how much more: counting stops at the limit (``changes.Over``),
    where rg's order of listing, which its threads vary, left it."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"more than {limit} bytes to index")
        self.limit = limit


def update_index(
    root: Path,
    progress: Progress | None = None,
    *,
    persist: bool = True,
    build_limit: int = 0,
    tuning: IndexTuning | None = None,
    listing: Listing | None = None,
    deadline: float | None = None,
    sized: Callable[[int], bool] | None = None,
) -> tuple[OpenIndex, IndexUpdate]:
    """Open (or create) the root's index and apply the tree's changes to it; ``persist``
    False (``--no-cache``) builds a throw-away index in memory. More than ``build_limit``
    bytes (0: no limit) of new or changed files raise ``TooLarge`` before anything is read.
    ``listing``: the search's list of the tree's files (None: listed here). Past
    ``deadline`` (``time.monotonic``) the build commits what it has and stops
    (``IndexUpdate.partial``): the next update goes on from there; a deadline that comes
    while the tree is listed raises ``changes.Late``. ``sized`` hears the bytes of new files
    to index as soon as the tree is listed, before any is read; when it answers True the
    build is left to a process of its own (``behind.py``) and ``Deferred`` is raised."""
    tuning = tuning or IndexTuning()
    started = time.perf_counter()
    directory = index_dir(root)
    manifest_path = directory / MANIFEST
    stored = read_manifest(manifest_path) if persist else None
    manifest = stored.files if stored is not None else {}
    marker = directory.with_name(f"{directory.name}.too-large")
    if build_limit and not manifest:
        _check_marker(marker, root, tuning.too_large_s, build_limit)
    if persist and not manifest:
        drop_other_versions(root)
    changes = Changes(root, remember=persist, listing=listing, deadline=deadline)
    try:
        state = changes.list(recall=bool(manifest), limit=build_limit)
    except Over as over:
        moved = over.counted
    else:
        # New files only: indexed ones are re-read when their stat is not trusted (written in
        # the last 2 s), and that costs a read, not a build.
        moved = sum(n for rel, n in changes.to_read(state, manifest).items() if rel not in manifest)
    if build_limit and moved > build_limit:
        if persist:
            _write_marker(marker, root, moved)
        raise TooLarge(build_limit)
    if sized is not None and sized(moved):
        raise Deferred(moved)
    opened = open_index(directory, _wait(tuning, deadline)) if persist else None
    if opened is None or opened.in_memory:
        persist = False
    index = opened.index if opened is not None else in_memory()
    notice = opened.repaired if opened is not None else ""
    stored = opened.stored if opened is not None else None
    manifest = stored.files if stored is not None else {}
    if persist and stored is None:  # named from the start: a build killed midway is cq's too
        (directory / "root").write_bytes(os.fsencode(root))
    changed, fresh = changes.read(state, manifest)
    changes.finish()
    removed = set(manifest) - set(fresh)
    stale, partial = False, changes.cut
    pooled = updated = 0
    if changed or removed:
        writer = _writer(index, tuning, directory if persist else None)
        if writer is None:
            stale = True
        else:
            if persist:  # another process may have committed while this one waited
                latest = read_manifest(manifest_path)
                manifest = latest.files if latest is not None else {}
                changed = {p: d for p, d in changed.items() if _differs(manifest, fresh, p)}
                removed = set(manifest) - set(fresh)
            updated = len(changed)  # _apply empties it as it goes
            done = _apply(root, writer, changed, removed, progress, tuning, deadline)
            partial = partial or done.partial
            fresh = {p: e for p, e in fresh.items() if p not in done.left}
            updated, pooled = updated - len(done.left), done.pooled
            if persist:
                write_manifest(manifest_path, fresh, seal(directory))
            index.reload()
            manifest = fresh
    update = IndexUpdate(
        files=len(manifest),
        documents=index.searcher().num_docs,
        files_updated=updated,
        files_removed=0 if stale else len(removed),
        files_read=changes.files_read,
        files_pooled=pooled,
        source_bytes=sum(e.size for e in manifest.values()),
        milliseconds=round((time.perf_counter() - started) * 1000, 1),
        stale=stale,
        partial=partial,
        notice=notice,
        checked=len(stored.seal.files) if stored is not None else 0,
    )
    if persist:  # its last use; other roots' indexes make room (cq/cache/footprint.py)
        footprint.used(directory, wrote=bool(updated or update.files_removed))
    return OpenIndex(root, index, manifest), update


def _wait(tuning: IndexTuning, deadline: float | None) -> float:
    """How long to wait for another process's writer: ``lock_wait_s``, within the deadline."""
    if deadline is None:
        return tuning.lock_wait_s
    return max(0.0, min(tuning.lock_wait_s, deadline - time.monotonic()))


def _check_marker(marker: Path, root: Path, keep_s: float, build_limit: int) -> None:
    """Raise ``TooLarge`` again without listing the tree when a recent search found it too
    large and the root directory has not changed since (listing and stat-ing a tree that
    large costs a second on a loaded machine: bench/results/2026-11-29-figures-from-cq.md),
    unless the
    limit now allows that size (``CQ_INDEX_AUTO_BYTES`` raised since)."""
    try:
        mtime, size, when = (read_regular(marker, 256) or b"").decode().split()
        same = int(mtime) == root.stat().st_mtime_ns
    except (OSError, ValueError, Damage):
        return
    if same and time.time() - float(when) < keep_s and int(size) > build_limit:
        raise TooLarge(build_limit)


def _write_marker(marker: Path, root: Path, size: int) -> None:
    with contextlib.suppress(OSError):
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(f"{root.stat().st_mtime_ns} {size} {time.time()}")


def _differs(manifest: Manifest, fresh: Manifest, path: str) -> bool:
    old = manifest.get(path)
    return old is None or old.digest != fresh[path].digest


class Applied(msgspec.Struct, frozen=True, kw_only=True):
    pooled: int = 0  # files whose rows worker processes prepared
    partial: bool = False  # stopped at the deadline
    left: frozenset[str] = frozenset()  # changed files not indexed (their old documents gone)


def _apply(
    root: Path,
    writer: Any,
    changed: dict[str, bytes],
    removed: set[str],
    progress: Progress | None,
    tuning: IndexTuning,
    deadline: float | None = None,
) -> Applied:
    """Replace the documents of what moved and commit; past ``deadline``, commit the files
    indexed so far (``left``: the others)."""
    import tantivy

    for rel in sorted(removed | set(changed)):
        writer.delete_documents_by_term("path", path_key(rel))
    total = len(changed)
    done = pooled = 0
    left = set(changed)
    batches = prepared_rows(changed, tuning.build_pool_bytes, tuning.build_batch_bytes)
    for rows, by_worker in batches:
        for row in rows:
            writer.add_document(_document(tantivy, row))
            done += row[1] == "file"
            pooled += by_worker and row[1] == "file"
            left.discard(row[0])
        if progress is not None:
            progress(f"indexing {root.name}: {done}/{total} files")
        if deadline is not None and left and time.monotonic() >= deadline:
            batches.close()  # the pool's batches not started are cancelled
            break
    writer.commit()
    writer.wait_merging_threads()
    return Applied(pooled=pooled, partial=bool(left), left=frozenset(left))


def _document(tantivy: Any, row: Row) -> Any:
    path, kind, qualname, line, path_words, names, signature, doc, text = row
    fields: dict[str, Any] = {"path": path_key(path), "kind": kind, "line": line}
    for name, value in (
        ("qualname", qualname),
        ("path_words", readable(path_words)),
        ("names", names),
        ("sig", signature),
        ("doc", doc),
        ("body", text),
    ):
        if value:
            fields[name] = value
    return tantivy.Document(**fields)


def _writer(index: Any, tuning: IndexTuning, directory: Path | None) -> Any | None:
    """Tantivy's writer, waiting up to ``lock_wait_s`` for another process to release it.
    Tantivy refuses the writer alike when its lock file cannot be made: with ``directory``
    removed meanwhile (``cq index --clear``) that refusal is the index gone, not a writer
    elsewhere, and is raised as the index's failure, which the caller builds again (read
    as last committed, the search answered from an empty index and said nothing)."""
    deadline = time.monotonic() + tuning.lock_wait_s
    while True:
        try:
            return index.writer(heap_size=tuning.writer_heap_bytes, num_threads=writer_threads())
        except ValueError:
            if directory is not None and not directory.is_dir():
                raise
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)
