"""The installer's file operations, none of which leaves the project or home it was pointed at.

A project (or a home) may hold links planted by someone else: ``CLAUDE.md -> ../out/bashrc``,
a ``.claude`` directory that points elsewhere. Following one would make ``cq agent install``
append to, overwrite or delete a file outside the tree, and opening a FIFO would block it. So
every path is reached from its anchor (the project root, the home, ``$CODEX_HOME``: the places
the user named, links allowed there) one component at a time, each opened with ``O_NOFOLLOW``
relative to the descriptor of the one before; a link, a directory that is not one, or a file
that is not a regular file is refused with a one-line ``Refused`` naming it. ``Tree.check``
runs on every path before anything is written, so a refusal leaves everything as it was; the
descriptor walk keeps the writes themselves from following a link swapped in after the check.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from cq.errors import CqError

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_FILE = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # NONBLOCK: a FIFO never blocks the open
_KINDS = (
    (stat.S_ISREG, "a regular file"),
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
)


class Refused(CqError):
    """A path the installer would write or remove is a link or not a regular file/directory."""


class Tree:
    """The files under the anchors the installer was pointed at."""

    def __init__(self, anchors: tuple[Path, ...]) -> None:
        # the deepest anchor holding a path is the one it is reached from
        self._anchors = sorted((os.path.abspath(a) for a in anchors), key=len, reverse=True)

    def check(self, path: str) -> None:
        """Refuse ``path`` if anything of it below its anchor is a link or the wrong kind."""
        anchor, parts = self._split(path)
        here = anchor
        for depth, part in enumerate(parts, 1):
            here = os.path.join(here, part)
            try:
                mode = os.lstat(here).st_mode
            except FileNotFoundError:
                return  # the rest is created by install, as real directories
            if not (stat.S_ISREG(mode) if depth == len(parts) else stat.S_ISDIR(mode)):
                raise _refused(here, mode, want_dir=depth < len(parts))

    def read(self, path: str) -> str | None:
        """The text as stored (CRLF stays CRLF), None if there is no such file."""
        try:
            fd = self._open(path, os.O_RDONLY, None)
        except FileNotFoundError:
            return None
        with os.fdopen(fd, "rb") as f:
            return f.read().decode("utf-8", errors="surrogateescape")

    def write(self, path: str, text: str) -> tuple[str, ...]:
        """Replace the file's content (keeping its inode and mode) or create it; returns the
        directories made for it, deepest first. The room for the new text is taken before
        the old is touched, so a full disk or a file-size limit leaves the file as it was,
        or not there (the install then puts back what it wrote before)."""
        created: list[str] = []
        data = text.encode("utf-8", errors="surrogateescape")
        try:
            fd, fresh = self._open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, created), True
        except FileExistsError:
            fd, fresh = self._open(path, os.O_WRONLY, None), False
        try:
            with os.fdopen(fd, "wb") as f:
                if data:  # only now: the descriptor is known to be a regular file's
                    _reserve(fd, len(data))
                f.write(data)
                f.truncate(len(data))
        except OSError:
            if fresh:
                with contextlib.suppress(OSError):
                    self.unlink(path)
                    for directory in reversed(created):
                        self.rmdir(directory)
            raise
        return tuple(reversed(created))

    def unlink(self, path: str) -> None:
        directory, name = self._parent(path, create=False, created=[])
        try:
            mode = os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode
            if not stat.S_ISREG(mode):
                raise _refused(path, mode, want_dir=False)
            os.unlink(name, dir_fd=directory)
        finally:
            os.close(directory)

    def rmdir(self, path: str) -> None:
        """Remove an empty directory; OSError if it is not empty, gone or not a directory."""
        directory, name = self._parent(path, create=False, created=[])
        try:
            os.rmdir(name, dir_fd=directory)  # never follows a link: ENOTDIR
        finally:
            os.close(directory)

    def _open(self, path: str, flags: int, created: list[str] | None) -> int:
        """A descriptor of the regular file ``path``; ``created`` (when creating) receives the
        directories made for it."""
        making = created is not None
        directory, name = self._parent(path, create=making, created=created if making else [])
        try:
            fd = os.open(name, flags | _FILE, 0o666, dir_fd=directory)
        except OSError as exc:
            raise _why(path, exc, want_dir=False) from None
        finally:
            os.close(directory)
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            raise _refused(path, mode, want_dir=False)
        return fd

    def _parent(self, path: str, *, create: bool, created: list[str]) -> tuple[int, str]:
        """A descriptor of ``path``'s directory, reached without following a link below the
        anchor (missing directories made when ``create``), and the file's name in it."""
        anchor, parts = self._split(path)
        if create and not os.path.isdir(anchor):
            created.extend(_missing(anchor))
            os.makedirs(anchor, exist_ok=True)
        fd = os.open(anchor, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        here = anchor
        try:
            for part in parts[:-1]:
                here = os.path.join(here, part)
                try:
                    nxt = os.open(part, _DIR, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    os.mkdir(part, 0o777, dir_fd=fd)
                    created.append(here)
                    nxt = os.open(part, _DIR, dir_fd=fd)
                except OSError as exc:
                    raise _why(here, exc, want_dir=True) from None
                os.close(fd)
                fd = nxt
        except BaseException:
            os.close(fd)
            raise
        return fd, parts[-1]

    def _split(self, path: str) -> tuple[str, list[str]]:
        """The anchor ``path`` lies under and its components below it. A path under none (a
        manifest entry from another ``$CODEX_HOME``) is reached from its own directory."""
        path = os.path.abspath(path)
        for anchor in self._anchors:
            if path.startswith(anchor.rstrip(os.sep) + os.sep):
                return anchor, list(Path(path).relative_to(anchor).parts)
        head, name = os.path.split(path)
        return head, [name]


def _reserve(fd: int, size: int) -> None:
    """Allocate ``size`` bytes of the file; a file system that cannot (EOPNOTSUPP, EINVAL)
    is written without it."""
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            raise


def _missing(directory: str) -> list[str]:
    """``directory`` and its ancestors that do not exist, outermost first."""
    missing = []
    while not os.path.exists(directory):
        missing.append(directory)
        directory = os.path.dirname(directory)
    return missing[::-1]


def _why(path: str, exc: OSError, *, want_dir: bool) -> OSError | Refused:
    """A refusal when the open failed on a link or the wrong kind of file, else the error."""
    if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK, errno.ENXIO):
        return exc
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return exc
    return _refused(path, mode, want_dir=want_dir)


def _refused(path: str, mode: int, *, want_dir: bool) -> Refused:
    what = next((name for test, name in _KINDS if test(mode)), "of an unknown kind")
    need = "a directory" if want_dir else "a regular file"
    return Refused(
        f"{path} is {what}, not {need}: cq agent writes and removes only regular files and "
        "directories inside the project or home, never through a link"
    )
