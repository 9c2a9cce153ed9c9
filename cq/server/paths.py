"""Where the server's files live: a private directory of the user's, checked before each use.

``$XDG_RUNTIME_DIR/cq`` when the session has a runtime dir, else ``cq-<uid>`` under the temp
dir, and in it one directory per install and settings (``identity.install_key``: two venvs,
or two values of ``CQ_CACHE_DIR``, each keep their own server warm). Each must be a real
directory (not a link), owned by this user and closed to everyone else (mode 0700): another
user who could plant a socket there would get this user's searches, env and file
descriptors. An install's directory holds the socket (``server.sock``), the lock whose
holder is the server (``server.lock``) and nothing else; nothing here is written into a
searched tree. Standard library only: the client imports it on every search.
"""

from __future__ import annotations

import os
import stat

SOCKET_NAME = "server.sock"
LOCK_NAME = "server.lock"


class ServerDirError(Exception):
    """The runtime dir is not private to this user (the message says why)."""


def runtime_dir() -> str:
    """This install's server directory, created mode 0700 when missing (with the user's
    ``cq`` directory above it); ``ServerDirError`` when either cannot be trusted."""
    from cq.server.identity import install_key

    return _private(os.path.join(_private(users_dir()), install_key()))


def users_dir() -> str:
    """The directory of every install's server directory (not created here)."""
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if xdg and os.path.isabs(xdg) and os.path.isdir(xdg):
        return os.path.join(xdg, "cq")
    import tempfile

    return os.path.join(tempfile.gettempdir(), f"cq-{os.getuid()}")


def every_dir() -> list[str]:
    """Every install's server directory that exists and can be trusted (``--all``)."""
    base = _private(users_dir())
    found = []
    for name in sorted(os.listdir(base)):
        path = os.path.join(base, name)
        try:
            _check_private(path)
        except ServerDirError:
            continue
        found.append(path)
    return found


def _private(path: str) -> str:
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
