"""Where the server's files live: a private directory of the user's, checked before each use.

``$XDG_RUNTIME_DIR/cq`` when the session has a runtime dir, else ``cq-<uid>`` under the temp
dir. Either way the directory must be a real directory (not a link), owned by this user and
closed to everyone else (mode 0700): another user who could plant a socket there would get
this user's searches, env and file descriptors. It holds the socket (``server.sock``), the
lock whose holder is the server (``server.lock``) and nothing else; nothing here is written
into a searched tree. Standard library only: the client imports it on every search.
"""

from __future__ import annotations

import os
import stat

SOCKET_NAME = "server.sock"
LOCK_NAME = "server.lock"


class ServerDirError(Exception):
    """The runtime dir is not private to this user (the message says why)."""


def runtime_dir() -> str:
    """The server's directory, created mode 0700 when missing; ``ServerDirError`` when it (or
    its parent, for the temp dir fallback) cannot be trusted."""
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if xdg and os.path.isabs(xdg) and os.path.isdir(xdg):
        path = os.path.join(xdg, "cq")
    else:
        import tempfile

        path = os.path.join(tempfile.gettempdir(), f"cq-{os.getuid()}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise ServerDirError(f"cannot create {path}: {exc.strerror}") from None
    _check_private(path)
    return path


def _check_private(path: str) -> None:
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise ServerDirError(f"cannot read {path}: {exc.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise ServerDirError(f"{path} is not a directory (a link or a file)")
    if info.st_uid != os.getuid():
        raise ServerDirError(f"{path} belongs to another user (uid {info.st_uid})")
    if info.st_mode & 0o077:
        raise ServerDirError(f"{path} is open to other users (mode {info.st_mode & 0o777:o})")


def socket_path(directory: str) -> str:
    return os.path.join(directory, SOCKET_NAME)


def lock_path(directory: str) -> str:
    return os.path.join(directory, LOCK_NAME)
