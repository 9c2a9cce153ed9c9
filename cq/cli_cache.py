"""``cq cache info | prune | clear``: look at, shrink or empty the persistent cache."""

from __future__ import annotations

import argparse
import sys

from cq.errors import CqError


def add_cache_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "cache",
        help="show, shrink or clear the persistent cache",
        description="The cache lives in $CQ_CACHE_DIR, else $XDG_CACHE_HOME/cq, else "
        "~/.cache/cq; its bound is $CQ_CACHE_MAX_MB (default 512). info: sizes per kind; "
        "prune: bring the file under the bound now; clear: delete it.",
    )
    p.add_argument("action", choices=("info", "prune", "clear"))


def run_cache_command(args: argparse.Namespace) -> int:
    from cq.cache.store import FILE_NAME, Store, cache_dir, max_bytes_from_env

    directory = cache_dir()
    path = directory / FILE_NAME
    if directory.exists() and not directory.is_dir():
        raise CqError(f"cache dir {directory} is not a directory (CQ_CACHE_DIR)")
    if not directory.exists():
        print(f"cache dir: {directory}\nempty")
        return 0
    store = Store(path, max_bytes_from_env(), warn=False)
    if not store.available:
        raise CqError(f"cache unavailable: {store.fault}")
    if store.notice:  # e.g. a corrupt file was set aside: the command still works
        print(f"cq: warning: {store.notice}", file=sys.stderr)
    before = store.sizes()
    if args.action == "clear":
        if not store.clear():
            raise CqError(f"cannot clear the cache: {store.fault}")
        freed = (before.file_bytes + before.wal_bytes) if before else 0
        print(f"cleared {path} ({_mb(freed)})")
        return 0
    if args.action == "prune":
        store.prune()
    sizes = store.sizes()
    if before is None or sizes is None:
        raise CqError(f"cache unavailable: {store.fault or store.notice}")
    if args.action == "prune":
        print(
            f"pruned {path}: {_mb(before.file_bytes)} -> {_mb(sizes.file_bytes)}"
            f" (bound {_mb(sizes.bound)}, {sizes.entries} entries)"
        )
        return 0
    print(f"cache dir: {directory}")
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
    return 0


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"
