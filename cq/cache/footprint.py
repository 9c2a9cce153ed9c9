"""The cache dir's other tenants, repository indexes and Pyrefly's scratch, kept to their share.

``CQ_CACHE_MAX_MB`` bounds the whole cache dir: the database with its WAL keeps to one half
(``bound.database_share``), the repository indexes (``index/v<schema>/<root hash>/``, one
directory per root, owned by ``cq.index``) and Pyrefly's scratch dir (``pyrefly-tmp``) to the
other. Halves because the two grew alike where it was measured: 28 roots searched with
questions left 120 MB of indexes beside a 93 MB database.

A root's last use is its index directory's modification time: the index sets it each time a
search opens the index (``used``), and tantivy's own writes move it too, so no record of its
own has to be kept (or can go stale). After a search wrote an index, ``used`` trims: the
indexes of roots that no longer exist go first, then the least recently used others until
the share holds; the index just used is never removed by its own search (an index larger
than the share stays while it is the newest). Scratch files untouched for a day go too.
Each removal is a whole directory, as ``cq index --clear`` removes one.

In: the cache dir and its bound. Out: ``Footprint`` (what ``cq cache info`` lists) and
removals. Walking 500 index directories of 12 files each cost 175-190 ms on a loaded 2-core
machine (a stat per file), so it runs only after a search wrote an index (a new root, an
edited file), in the index's own thread, and at ``cq cache prune``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from pathlib import Path

import msgspec

from cq.cache import bound as store_bound
from cq.cache.place import cache_dir, max_bytes_from_env

_INDEXES = "index"
_SCRATCH = "pyrefly-tmp"
_ROOT_FILE = "root"  # the index's note of the tree it covers
_MARKER = ".too-large"  # a root found too large to index during a search
SCRATCH_AGE = 24 * 3600  # s: a scratch file untouched this long belongs to no live server


class RootUse(msgspec.Struct, frozen=True):
    """One root's index: where, how large, last used, and whether the tree still exists."""

    directory: str
    root: str  # "" when the index has not named its tree yet
    size: int
    used: float  # seconds since the epoch
    gone: bool


class Footprint(msgspec.Struct, frozen=True):
    """What the indexes and the scratch dir take, most recently used root first."""

    roots: tuple[RootUse, ...]
    scratch: int

    @property
    def total(self) -> int:
        return self.scratch + sum(r.size for r in self.roots)


def scan(cache: Path) -> Footprint:
    """Every root's index under ``cache`` and the scratch dir's size; never raises."""
    roots = [_root_use(d) for d in _index_dirs(cache)]
    roots.sort(key=lambda r: (-r.used, r.directory))
    return Footprint(roots=tuple(roots), scratch=_tree_size(cache / _SCRATCH))


def used(directory: Path, wrote: bool) -> None:
    """A search opened the index at ``directory`` (in the cache dir): mark it used now and,
    when it ``wrote`` to it (only a write makes the indexes grow), keep the indexes and
    scratch to their share of ``CQ_CACHE_MAX_MB``. Never raises: a cache dir that cannot be
    trimmed is left as it is."""
    with contextlib.suppress(OSError):
        os.utime(directory)
    if wrote:
        with contextlib.suppress(OSError):
            trim(cache_dir(), max_bytes_from_env(), keep=directory)


def trim(cache: Path, total_bound: int, keep: Path | None = None) -> list[RootUse]:
    """Remove stale scratch, the indexes of roots that are gone, then the least recently
    used indexes until the rest fit ``bound.others_share(total_bound)``; never ``keep``.
    Returns the removed indexes."""
    share = store_bound.others_share(total_bound)
    _drop_stale_scratch(cache / _SCRATCH)
    footprint = scan(cache)
    kept = str(keep) if keep is not None else None
    removed: list[RootUse] = []
    total = footprint.total
    for use in sorted(footprint.roots, key=lambda r: (not r.gone, r.used, r.directory)):
        if use.directory == kept or (not use.gone and total <= share):
            continue
        _remove(Path(use.directory))
        removed.append(use)
        total -= use.size
    return removed


def _index_dirs(cache: Path) -> list[Path]:
    base = cache / _INDEXES
    try:
        versions = [v for v in base.iterdir() if v.is_dir()]
    except OSError:
        return []
    found = []
    for version in versions:
        with contextlib.suppress(OSError):
            found += [d for d in version.iterdir() if d.is_dir()]
    return found


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


def _tree_size(directory: Path) -> int:
    """Bytes of the files below ``directory`` (0 when it is missing)."""
    total = 0
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False):
                    total += _tree_size(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
    return total


def _remove(directory: Path) -> None:
    shutil.rmtree(directory, ignore_errors=True)
    with contextlib.suppress(OSError):
        directory.with_name(directory.name + _MARKER).unlink(missing_ok=True)


def _drop_stale_scratch(scratch: Path) -> None:
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
