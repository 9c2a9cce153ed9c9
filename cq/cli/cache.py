"""``cq cache info | prune | clear``: look at, shrink or empty the persistent cache."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING

from cq.errors import CqError

if TYPE_CHECKING:
    from pathlib import Path

    from cq.cache.store import Store


def add_cache_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "cache",
        help="the persistent cache: info (sizes), prune, clear",
        description="The cache lives in $CQ_CACHE_DIR, else $XDG_CACHE_HOME/cq, else "
        "~/.cache/cq; its bound is $CQ_CACHE_MAX_MB (default 512): half for the database, "
        "half shared by the repository indexes, the embedding vectors and Pyrefly's scratch "
        "(least recently used first). info (the default): sizes per kind, per indexed root and per "
        "embedding model; prune: bring it under the bound now; clear: delete every cache "
        "kind (database, indexes, vectors). Embedding models (cq embed fetch) and agent "
        "install records are yours, not cache: shown apart, never pruned or cleared, as no "
        "file cq did not write is.",
    )
    # ``cq cache`` alone shows it, as ``cq server`` alone says how the server is
    p.add_argument("action", nargs="?", default="info", choices=("info", "prune", "clear"))


def run_cache_command(args: argparse.Namespace) -> int:
    from cq.cache import bound
    from cq.cache.faults import misplaced
    from cq.cache.place import cache_dir, max_bytes_from_env
    from cq.cache.store import FILE_NAME, Store

    directory = cache_dir()
    path = directory / FILE_NAME
    if reason := misplaced(directory):
        raise CqError(f"{reason} (set CQ_CACHE_DIR to a directory)")
    if not directory.exists():
        print(f"cache dir: {directory}\nempty")
        return 0
    if args.action == "clear":  # opens no store of its own first: a damaged one goes too
        return _clear(directory)
    total = max_bytes_from_env()
    store = Store(path, bound.database_share(total), warn=False)
    try:  # closed here, not at exit: its log is folded back before the process ends
        return _info_or_prune(store, args.action, directory, total)
    finally:
        store.close()


def _info_or_prune(store: Store, action: str, directory: Path, total: int) -> int:
    from cq.cache import bound, footprint

    path = store.path
    if not store.available:
        raise CqError(f"cache unavailable: {store.fault}")
    before = _sizes(store)  # reading may find corruption: the file is then set aside
    if store.notice:  # e.g. a corrupt file was set aside: the command still works
        print(f"cq: warning: {store.notice}", file=sys.stderr)
    if action == "prune":
        store.prune()
        removed = footprint.trim(directory, total)
    sizes = _sizes(store)
    if before is None or sizes is None:
        raise CqError(f"cache unavailable: {store.fault or store.notice}")
    if action == "prune":
        indexes = sum(isinstance(r, footprint.RootUse) for r in removed)
        # The file with its log on both sides: prune folds the log into the file, so the
        # file alone would seem to grow.
        print(
            f"pruned {path}: {_mb(before.file_bytes + before.wal_bytes)}"
            f" -> {_mb(sizes.file_bytes + sizes.wal_bytes)}"
            f" (bound {_mb(sizes.bound)}, {sizes.entries} entries);"
            f" {indexes} repository indexes removed;"
            f" {len(removed) - indexes} embedding vector stores removed"
        )
        return 0
    found = footprint.scan(directory)
    database = sizes.file_bytes + sizes.wal_bytes
    print(f"cache dir: {directory} (bound {_mb(total)}); cache used {_mb(database + found.total)}")
    for namespace, (entries, size) in store.info().items():
        print(f"{namespace}: {entries} entries, {_mb(size)}")
    print(
        f"entries: {sizes.entries}, {_mb(sizes.stored_bytes)} stored"
        f" ({_mb(sizes.raw_bytes)} before compression)"
    )
    print(
        f"file: {_mb(sizes.file_bytes)} (free pages {_mb(sizes.free_bytes)}),"
        f" WAL {_mb(sizes.wal_bytes)}; bound {_mb(sizes.bound)}"
    )
    _print_others(found, bound.others_share(total))
    return 0


def _clear(directory) -> int:
    """Every cache kind removed; one line saying what was freed (and what a build kept)."""
    from cq.cache.clearing import clear

    done = clear(directory)
    if done.failed:
        raise CqError(f"cannot clear the cache: {done.failed}")
    parts = [f"database {_mb(done.database)}", _count(done.indexes, "repository index")]
    parts[-1] += f" {_mb(done.index_bytes)}"
    parts.append(f"{_count(done.vectors, 'embedding vector store')} {_mb(done.vector_bytes)}")
    if done.scratch_bytes:
        parts.append(f"Pyrefly scratch {_mb(done.scratch_bytes)}")
    line = f"cleared {directory}: {_mb(done.freed)} freed ({', '.join(parts)})"
    if done.busy:
        line += f"; kept the vectors of {', '.join(done.busy)} (a build is writing them)"
    print(line)
    return 0


def _print_others(found, share: int) -> None:
    """The other half (indexed roots and vector stores, most recently used first, and
    Pyrefly's scratch), then what is kept apart from the cache."""
    from cq.terminal import visible

    print(f"indexes, vectors and scratch: {_mb(found.total)}; bound {_mb(share)}")
    print(
        f"index: {len(found.roots)} roots, {_mb(found.indexes)};"
        f" Pyrefly scratch {_mb(found.scratch)}"
    )
    for use in found.roots:
        name = visible(use.root) if use.root else "(root not recorded yet)"
        gone = " (gone)" if use.gone else ""
        print(f"  {name}{gone}: {_mb(use.size)}, last used {_when(use.used)}")
    vectors = sum(v.size for v in found.vectors)
    print(f"embedding vectors: {len(found.vectors)} models, {_mb(vectors)}")
    for store in found.vectors:
        busy = " (a build is writing it)" if store.busy else ""
        print(f"  {visible(store.model)}{busy}: {_mb(store.size)}, last used {_when(store.used)}")
    kept = found.kept
    print(
        f"not cache, kept by prune and clear: embedding models {kept.models},"
        f" {_mb(kept.model_bytes)} (cq embed fetch); agent install records {kept.agent_records}"
    )


def _sizes(store):
    """The store's sizes; once more if the first read found a corrupt file and replaced it."""
    sizes = store.sizes()
    return store.sizes() if sizes is None and store.available else sizes


def _count(n: int, noun: str) -> str:
    plural = noun.replace("index", "indexes") if noun.endswith("index") else f"{noun}s"
    return f"{n} {noun if n == 1 else plural}"


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def _mb(size: int) -> str:
    return f"{size / (1 << 20):.1f} MB"
