"""Where a root's index lives: ``<cache dir>/index/v<schema>/<hash of the root path>/``, never
inside the searched tree. The directory holds tantivy's files, ``manifest.msgpack`` and a
``root`` file naming the tree (for ``cq index --clear`` and ``cq cache info``)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
from pathlib import Path

from cq.cache import cache_dir
from cq.cache.place import INDEXES
from cq.index.schema import SCHEMA_VERSION


def indexes_dir() -> Path:
    return cache_dir() / INDEXES


def index_dir(root: Path) -> Path:
    """``root``: its real path (a settled request's, ``cq.settings.settle``; ``cq index``'s)."""
    key = hashlib.blake2b(os.fsencode(root), digest_size=10).hexdigest()
    return indexes_dir() / f"v{SCHEMA_VERSION}" / key


def drop_other_versions(root: Path) -> None:
    """Remove this root's indexes of other schema versions (an upgraded cq builds its own:
    the old one would only take disk space until ``cq cache clear``)."""
    current = index_dir(root)
    base = current.parent.parent
    if not base.is_dir():
        return
    for version in base.iterdir():
        old = version / current.name
        if version.name != current.parent.name and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)


def dir_size(directory: Path) -> int:
    """Bytes of the regular files under ``directory`` (links not followed). Another process
    may remove the directory meanwhile (``cq cache clear``): what is gone counts nothing, as
    ``os.walk`` passes over a directory it cannot list (``Path.rglob`` raises)."""
    total = 0
    for parent, _dirs, names in os.walk(directory):
        for name in names:
            with contextlib.suppress(OSError):
                info = os.lstat(os.path.join(parent, name))
                total += info.st_size if stat.S_ISREG(info.st_mode) else 0
    return total


def clear_index(root: Path | None) -> tuple[int, int]:
    """Remove one root's index (every root's when None): (indexes removed, bytes freed)."""
    targets = [index_dir(root)] if root is not None else _all_index_dirs()
    removed = freed = 0
    for target in targets:
        with contextlib.suppress(OSError):
            target.with_name(f"{target.name}.too-large").unlink(missing_ok=True)
        if not target.is_dir() or target.is_symlink():
            continue
        # renamed first: a search opening it meanwhile finds it whole or not at all
        aside = target.with_name(f"{target.name}.cleared.{os.getpid()}")
        try:
            target.rename(aside)
        except OSError:
            continue
        freed += dir_size(aside)
        shutil.rmtree(aside, ignore_errors=True)
        removed += 1
    return removed, freed


def _all_index_dirs() -> list[Path]:
    base = indexes_dir()
    if not base.exists():
        return []
    try:
        versions = [v for v in base.iterdir() if v.is_dir() and not v.is_symlink()]
        return [d for v in versions for d in v.iterdir() if d.is_dir() and not d.is_symlink()]
    except OSError:
        return []
