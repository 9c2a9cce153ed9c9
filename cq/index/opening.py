"""Open a root's index only once it is checked (``integrity.py``), and rebuild a damaged one.

In: the index directory. Out: ``Opened``, a tantivy index that passed the checks (its
manifest with it), or a new one where a damaged one was, saying why (``repaired``), or an
index in memory when the directory cannot be used at all (the search then indexes as
``--no-cache`` does).

A check that fails is not yet damage: another process may be between its commit and its
manifest (the seal then names the previous ``meta.json``), or have merged segments away
while this one hashed them. So a directory is judged again holding tantivy's writer lock (the
``flock`` tantivy takes on ``.tantivy-writer.lock``: while cq holds it, no writer of any
process is at work), and only then set aside and built again. A lock held past ``wait``
seconds raises ``Busy``: the search answers without the index rather than trust it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cq.index.integrity import Damage, describe, engine_failed, verify
from cq.index.location import indexes_dir
from cq.index.manifest import Stored, read_manifest
from cq.index.schema import build_schema, register_analyzers

MANIFEST = "manifest.msgpack"
_NAME = "the repository index"
_LOCK = ".tantivy-writer.lock"


class Busy(Exception):
    """Another process holds the writer of an index that did not pass its checks."""


class Opened:
    """A checked index, its manifest (None: none yet) and what was done to get it."""

    def __init__(
        self, index: Any, stored: Stored | None, repaired: str = "", in_memory: bool = False
    ) -> None:
        self.index, self.stored, self.repaired, self.in_memory = index, stored, repaired, in_memory


def open_index(directory: Path, wait: float) -> Opened:
    """The index in ``directory``, checked; rebuilt (``repaired`` says why) when damaged."""
    try:
        replaced = _make_usable(directory)
    except OSError as exc:
        reason = f"{_NAME} dir is unusable ({describe(exc)}); indexed in memory"
        return Opened(in_memory(), None, reason, in_memory=True)
    try:
        opened = _checked(directory)
        opened.repaired = replaced
        return opened
    except Damage:
        pass
    with _writer_lock(directory, wait) as held:
        if not held:
            raise Busy(f"another cq process is writing {_NAME}")
        try:
            return _checked(directory)  # a writer finished meanwhile: sound after all
        except Damage as exc:
            reason = f"{_NAME} was damaged ({exc}); it is rebuilt"
            set_aside(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        return Opened(_tantivy(directory), None, reason)
    except (Damage, OSError) as exc:  # not even a new index can be made there
        reason = f"{_NAME} dir is unusable ({describe(exc)}); indexed in memory"
        return Opened(in_memory(), None, reason, in_memory=True)


def _checked(directory: Path) -> Opened:
    stored = read_manifest(directory / MANIFEST)
    verify(directory, stored.seal if stored is not None else None)
    return Opened(_tantivy(directory), stored)


def _tantivy(directory: Path) -> Any:
    """Tantivy's index of a checked directory; any failure of the engine is ``Damage``."""
    import tantivy

    try:
        index = tantivy.Index(build_schema(), path=str(directory), reuse=True)
        register_analyzers(index)
        index.searcher()
    except BaseException as exc:
        if not engine_failed(exc):
            raise
        raise Damage(f"tantivy: {exc}") from exc
    return index


def in_memory() -> Any:
    import tantivy

    index = tantivy.Index(build_schema())
    register_analyzers(index)
    return index


def _make_usable(directory: Path) -> str:
    """Make ``directory`` and the index dirs above it directories: anything else in their
    place (a file, a link, a FIFO) is removed, as it is in cq's own cache dir; what was
    removed, said for the user ("" when nothing was)."""
    base = indexes_dir()
    replaced = ""
    for path in (base, directory.parent, directory):
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            break
        if not stat.S_ISDIR(info.st_mode):
            path.unlink()
            replaced = f"{_NAME} dir was not a directory; it is rebuilt"
            break
    directory.mkdir(parents=True, exist_ok=True)
    return replaced


@contextlib.contextmanager
def _writer_lock(directory: Path, wait: float) -> Iterator[bool]:
    """Hold tantivy's writer lock of ``directory`` (True), or not within ``wait`` seconds."""
    try:
        fd = os.open(
            directory / _LOCK,
            os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o644,
        )
    except OSError:  # not a file tantivy could lock either: nobody is writing
        yield True
        return
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            yield True
            return
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(0.05)
        yield True
    finally:
        os.close(fd)


def set_aside(directory: Path) -> None:
    """Remove a damaged index: renamed first (one step: no process sees it half deleted)."""
    aside = directory.with_name(f"{directory.name}.broken.{os.getpid()}")
    try:
        directory.rename(aside)
    except OSError:
        aside = directory
    if aside.is_dir() and not aside.is_symlink():
        shutil.rmtree(aside, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            aside.unlink()


def discard(directory: Path, wait: float) -> None:
    """Remove an index that failed when used, holding its writer lock (``Busy``: another
    process is writing it, and may be fixing it)."""
    import gc

    gc.collect()  # a writer of this process kept alive by a failure's traceback lets go
    with _writer_lock(directory, wait) as held:
        if not held:
            raise Busy(f"another cq process is writing {_NAME}")
        set_aside(directory)
