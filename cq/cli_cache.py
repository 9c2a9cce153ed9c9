"""``cq cache info`` / ``cq cache clear``: look at or empty the persistent cache."""

from __future__ import annotations

import argparse
import shutil


def add_cache_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "cache",
        help="show or clear the persistent cache",
        description="The cache lives in $CQ_CACHE_DIR, else $XDG_CACHE_HOME/cq, else ~/.cache/cq.",
    )
    p.add_argument("action", choices=("info", "clear"))


def run_cache_command(args: argparse.Namespace) -> int:
    from cq.cache import cache_dir, open_store

    directory = cache_dir()
    if args.action == "clear":
        removed = _size(directory)
        if directory.exists():
            open_store().close()
            shutil.rmtree(directory)
        print(f"cleared {directory} ({removed / 1e6:.1f} MB)")
        return 0
    print(f"cache dir: {directory}")
    if not directory.exists():
        print("empty")
        return 0
    for namespace, (entries, size) in open_store().info().items():
        print(f"{namespace}: {entries} entries, {size / 1e6:.1f} MB")
    from cq.index.location import index_summary

    roots, size = index_summary()
    print(f"index: {roots} roots, {size / 1e6:.1f} MB")
    print(f"total on disk: {_size(directory) / 1e6:.1f} MB")
    return 0


def _size(directory) -> int:
    if not directory.exists():
        return 0
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())
