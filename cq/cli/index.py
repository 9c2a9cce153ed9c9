"""``cq index``: build or update a root's repository index, or clear it (``--clear``)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cq.errors import CqError, UsageError
from cq.terminal import visible, warn

if TYPE_CHECKING:
    from cq.index.build import IndexUpdate, Progress
    from cq.model.index_tuning import IndexTuning


class IndexFailedError(CqError):
    """The index could not be built or written (a full disk, another process at work)."""

    exit_code = 1


def add_index_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "index",
        help="build or update the repository index (used by rewritten questions)",
        description=(
            "Build or update the repository index of ROOT in cq's cache dir (searches of "
            "rewritten questions do this on their own) and print its counts, size and time."
        ),
    )
    p.add_argument("--root", help="repository root (default: $CQ_ROOT or the current dir)")
    # ``cq index ~/src/app`` as ``cq search NAME ~/src/app`` takes its root
    p.add_argument("root_arg", nargs="?", metavar="ROOT", help="the same as --root ROOT")
    p.add_argument(
        "--clear", action="store_true", help="delete the index of ROOT (of every root: --all)"
    )
    p.add_argument("--all", action="store_true", help="with --clear: every root's index")
    p.add_argument(
        "--profile",
        default="interactive",
        help="the profile whose [index] table tunes the build (as cq search --profile)",
    )


def run_index_command(args: argparse.Namespace) -> int:
    from cq.index.location import clear_index, dir_size, index_dir
    from cq.profiles import load_tuning

    if "" in (args.root, args.root_arg):  # an unset shell variable, not the current dir
        raise UsageError("ROOT is empty (an unset variable?)")
    if args.root_arg is not None:
        if args.root is not None and args.root != args.root_arg:
            raise UsageError("give the root once: ROOT or --root ROOT")
        args.root = args.root_arg
    root = Path(os.path.realpath(args.root or os.environ.get("CQ_ROOT") or "."))  # once
    if args.all and not args.clear:
        raise UsageError("--all goes with --clear")
    if args.all and args.root:  # one root or every root: never both, never the wider by surprise
        raise UsageError("--clear takes --root ROOT or --all, not both")
    if args.clear:
        removed, freed = clear_index(None if args.all else root)
        print(f"cleared {removed} index{'es' if removed != 1 else ''} ({freed / 1e6:.1f} MB)")
        return 0
    if not root.is_dir():
        raise UsageError(f"not a directory: {root}")

    def progress(status: str) -> None:
        if sys.stderr.isatty():
            sys.stderr.write(f"\r\x1b[Kcq: {status}")
            sys.stderr.flush()

    tuning = load_tuning(args.profile, str(root)).index
    try:
        update = _updated(root, progress, tuning)
    finally:
        if sys.stderr.isatty():
            sys.stderr.write("\r\x1b[K")
    size = dir_size(index_dir(root))
    ratio = size / update.source_bytes if update.source_bytes else 0.0
    if update.notice:  # damage found and repaired, or a dir that cannot hold an index
        warn(update.notice)
    print(f"index of {visible(os.fsdecode(root))}")
    if update.checked:
        print(f"checked: {update.checked} segment files, as last committed")
    print(f"files: {update.files} ({update.source_bytes / 1e6:.1f} MB of source)")
    print(f"documents: {update.documents} (files and code units)")
    print(f"updated: {_files(update.files_updated)}, removed: {update.files_removed}")
    others = " (the others known by their stat)" if update.files_read < update.files else ""
    print(f"read: {_files(update.files_read)}{others}")
    if update.files_pooled:
        print(f"prepared by worker processes: {_files(update.files_pooled)}")
    # an index's fixed part outweighs a small tree's source: no ratio to read there
    of_source = f" ({ratio:.0%} of the source)" if update.source_bytes >= 1e6 else ""
    print(f"size: {size / 1e6:.1f} MB{of_source}")
    print(f"time: {update.milliseconds / 1000:.2f} s")
    if update.stale:
        print("another cq process is updating this index: shown as last committed")
    return 0


def _updated(root: Path, progress: Progress, tuning: IndexTuning) -> IndexUpdate:
    """The update, tried twice: a failure of tantivy while it ran (the index removed under
    it by ``--clear``, a segment damaged meanwhile) is checked and repaired by the second."""
    from cq.index.build import update_index
    from cq.index.integrity import describe, engine_failed
    from cq.index.opening import Busy

    for attempt in range(2):
        try:
            return update_index(root, progress, tuning=tuning)[1]
        except Busy as exc:
            raise IndexFailedError(f"{exc}: try again when it is done") from exc
        except BaseException as exc:
            if not engine_failed(exc):
                raise
            if attempt:
                raise IndexFailedError(f"the index could not be written: {describe(exc)}") from exc
    raise AssertionError("unreachable")


def _files(n: int) -> str:
    return f"{n} file{'s' if n != 1 else ''}"
