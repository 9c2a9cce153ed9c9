"""``cq cache info | prune | clear``: look at, shrink or empty the persistent cache."""

from __future__ import annotations

import argparse
import sys
import time

from cq.errors import CqError


def add_cache_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "cache",
        help="show, shrink or clear the persistent cache",
        description="The cache lives in $CQ_CACHE_DIR, else $XDG_CACHE_HOME/cq, else "
        "~/.cache/cq; its bound is $CQ_CACHE_MAX_MB (default 512), half for the database, "
        "half for repository indexes. info: sizes per kind and per indexed root; prune: "
        "bring it under the bound now; clear: delete the database.",
    )
    p.add_argument("action", choices=("info", "prune", "clear"))


def run_cache_command(args: argparse.Namespace) -> int:
    from cq.cache import bound, footprint
    from cq.cache.faults import misplaced
    from cq.cache.place import cache_dir, max_bytes_from_env, remove_files
    from cq.cache.store import FILE_NAME, Store

    directory = cache_dir()
    path = directory / FILE_NAME
    if reason := misplaced(directory):
        raise CqError(f"{reason} (set CQ_CACHE_DIR to a directory)")
    if not directory.exists():
        print(f"cache dir: {directory}\nempty")
        return 0
    if args.action == "clear":  # never opens the database: a damaged one goes too
        freed = sum(p.stat().st_size for p in directory.glob("cq*.sqlite3*") if p.is_file())
        if reason := remove_files(path):
            raise CqError(f"cannot clear the cache: {reason}")
        print(f"cleared {path} ({_mb(freed)})")
        return 0
    total = max_bytes_from_env()
    store = Store(path, bound.database_share(total), warn=False)
    if not store.available:
        raise CqError(f"cache unavailable: {store.fault}")
    before = _sizes(store)  # reading may find corruption: the file is then set aside
    if store.notice:  # e.g. a corrupt file was set aside: the command still works
        print(f"cq: warning: {store.notice}", file=sys.stderr)
    if args.action == "prune":
        store.prune()
        removed = footprint.trim(directory, total)
    sizes = _sizes(store)
    if before is None or sizes is None:
        raise CqError(f"cache unavailable: {store.fault or store.notice}")
    if args.action == "prune":
        print(
            f"pruned {path}: {_mb(before.file_bytes)} -> {_mb(sizes.file_bytes)}"
            f" (bound {_mb(sizes.bound)}, {sizes.entries} entries);"
            f" {len(removed)} repository indexes removed"
        )
        return 0
    print(f"cache dir: {directory} (bound {_mb(total)})")
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
    _print_roots(footprint.scan(directory), bound.others_share(total))
    return 0


def _print_roots(found, share: int) -> None:
    """The indexed roots, most recently used first, and Pyrefly's scratch."""
    from cq.terminal import visible

    print(
        f"index: {len(found.roots)} roots, {_mb(found.total - found.scratch)};"
        f" Pyrefly scratch {_mb(found.scratch)}; bound {_mb(share)}"
    )
    for use in found.roots:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(use.used))
        name = visible(use.root) if use.root else "(root not recorded yet)"
        gone = " (gone)" if use.gone else ""
        print(f"  {name}{gone}: {_mb(use.size)}, last used {when}")


def _sizes(store):
    """The store's sizes; once more if the first read found a corrupt file and replaced it."""
    sizes = store.sizes()
    return store.sizes() if sizes is None and store.available else sizes


def _mb(size: int) -> str:
    return f"{size / (1 << 20):.1f} MB"
