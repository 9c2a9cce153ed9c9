"""Reading a file that lies inside the searched root, checked on the open descriptor.

Every path a request names is confined before anything is read (``cq.confine``), and rg
follows no link while it walks; but a file can be replaced by a symbolic link between that
check (or rg's walk) and cq's own read of it. A path check cannot close that gap, so the
check is made on what was opened: the descriptor's own path (``/proc/self/fd`` on Linux,
``F_GETPATH`` on macOS) must lie inside the root's real path, and the file must be a regular
one (opened without blocking, so a FIFO swapped in cannot hang a search). Where neither way
to name a descriptor exists, the last component is opened with ``O_NOFOLLOW`` instead.
A refusal is an ``OSError``, which every reader already treats as a file it cannot read.
Imports nothing of cq.
"""

from __future__ import annotations

import errno
import os
import stat
import sys

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

_PROC_FD = "/proc/self/fd"
_NAMED = sys.platform.startswith("linux") and os.path.isdir(_PROC_FD)
_F_GETPATH = getattr(fcntl, "F_GETPATH", None)
_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | (0 if _NAMED or _F_GETPATH is not None else getattr(os, "O_NOFOLLOW", 0))
)


def read_inside(root: str | os.PathLike[str], path: str, limit: int = -1) -> bytes:
    """The bytes (at most ``limit``, all when -1) of ``path`` (relative to ``root``, or
    absolute), if what opens is a regular file inside ``root``; ``OSError`` otherwise."""
    fd = open_inside(root, path)
    with os.fdopen(fd, "rb") as fh:
        return fh.read(limit)


def open_inside(root: str | os.PathLike[str], path: str) -> int:
    """A descriptor of ``path``, checked as ``read_inside`` says; the caller closes it."""
    root = os.path.abspath(root)
    full = os.path.join(root, path)
    fd = os.open(full, _FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", full)
        opened = _opened_path(fd)
        if opened is not None and not _inside(root, opened):
            raise OSError(errno.EXDEV, "leads outside the root", full)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _opened_path(fd: int) -> str | None:
    """Where the open file really is (every link resolved), when the system can say."""
    if _NAMED:
        return os.readlink(f"{_PROC_FD}/{fd}")
    if _F_GETPATH is not None:
        name = fcntl.fcntl(fd, _F_GETPATH, b"\0" * 1024)
        return os.fsdecode(name.rstrip(b"\0"))
    return None


def _inside(root: str, real: str) -> bool:
    """Whether the real path ``real`` is ``root`` or below it; the root as given first (no
    system call), then resolved (only then: a lstat per part of the root, for every file
    read), since the root itself may be or lie under a link."""
    return _under(root, real) or _under(os.path.realpath(root), real)


def _under(base: str, real: str) -> bool:
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)
