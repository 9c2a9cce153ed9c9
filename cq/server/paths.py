"""Where the server's files live: a private directory of the user's, held open once checked.

``$XDG_RUNTIME_DIR/cq`` when the session has a runtime dir fit for it, else ``cq-<uid>``
under the temp dir, and in it one directory per install and settings
(``identity.install_key``: two venvs, or two values of ``CQ_CACHE_DIR``, each keep their own
server warm). Each must be a real directory (not a link), owned by this user and closed to
everyone else (mode 0700): another user who could plant a socket there would get this user's
searches, env and file descriptors. An install's directory holds the socket
(``server.sock``), the lock whose holder is the server (``server.lock``), the memo of the
code's digest (``code-digest``, ``identity.code_digest``) and nothing else; nothing here is
written into a searched tree. Standard library only: the client imports it
on every search.

Checked by path, then used by path, a directory can be swapped in between: another user who
may write to its parent renames it away and puts theirs in its place (``renameat2`` with
``RENAME_EXCHANGE`` won that race within a few searches). So each directory is opened once per
process without following a link, relative to its parent held open, its owner and mode are
checked on that descriptor, and ``runtime_dir`` returns ``/proc/self/fd/N``: a path the kernel
resolves through the open descriptor, so every connect, bind, lock and unlink afterwards lands
in the directory that was checked, whatever the name points at by then (``shown`` turns it
back into the name for messages). The parent is checked too, as ssh checks the directories
above a file it trusts: owned by this user or root and not writable by others unless sticky;
a ``$XDG_RUNTIME_DIR`` that is not (world-writable, not sticky) is passed over for the temp dir.
"""

from __future__ import annotations

import errno
import os
import stat

SOCKET_NAME = "server.sock"
LOCK_NAME = "server.lock"
_VIA = "/proc/self/fd/"

# The runtime dir this process opened and checked, by its name: descriptor (kept open for the
# life of the process, close-on-exec).
_pinned: dict[str, int] = {}


class ServerDirError(Exception):
    """The runtime dir is not private to this user (the message says why)."""


def runtime_dir() -> str:
    """This install's server directory as ``/proc/self/fd/N``, created mode 0700 when
    missing (with the user's ``cq`` directory above it); ``ServerDirError`` when either (or
    the parent above them) cannot be trusted."""
    from cq.server.identity import install_key

    users = users_dir()
    return _pin(os.path.join(shown(users), install_key()), users, install_key())


def users_dir() -> str:
    """The directory of every install's server directory, pinned as ``/proc/self/fd/N``."""
    parent, name = where()
    return _pin(os.path.join(parent, name), parent, name)


def every_dir() -> list[str]:
    """Every install's server directory that exists and can be trusted (``--all``)."""
    users = users_dir()
    found = []
    for name in sorted(os.listdir(users)):
        try:
            found.append(_pin(os.path.join(shown(users), name), users, name, create=False))
        except ServerDirError:
            continue
    return found


def _pin(path: str, parent: str, name: str, *, create: bool = True) -> str:
    """``parent/name`` (known to the user as ``path``) opened once and checked on its
    descriptor, then reached as ``/proc/self/fd/N``."""
    fd = _pinned.get(path)
    if fd is None:
        fd = _open_private(parent, name, path, create=create)
        _pinned[path] = fd
    try:
        _check_private(path, os.fstat(fd))  # the user may have opened it up since
        if os.stat(f"{_VIA}{fd}").st_ino != os.fstat(fd).st_ino:
            raise ServerDirError(f"{_VIA}{fd} is not {path} (is /proc mounted?)")
    except OSError as exc:
        raise ServerDirError(f"cannot use {path}: {exc.strerror}") from None
    return f"{_VIA}{fd}"


def shown(path: str) -> str:
    """``path`` with a pinned ``/proc/self/fd/N`` prefix replaced by the directory's name."""
    for name, fd in _pinned.items():
        via = f"{_VIA}{fd}"
        if path == via or path.startswith(via + "/"):
            return name + path[len(via) :]
    return path


def where() -> tuple[str, str]:
    """The parent directory and the name of the runtime dir in it (a started server compares
    it with its spawner's: ``lifecycle.spawn``)."""
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if xdg and os.path.isabs(xdg) and os.path.isdir(xdg) and _safe_parent(xdg):
        return xdg, "cq"
    import tempfile

    return tempfile.gettempdir(), f"cq-{os.getuid()}"


def _safe_parent(path: str) -> bool:
    """Nobody but this user (or root) can rename or replace what ``path`` holds."""
    try:
        info = os.stat(path)
    except OSError:
        return False
    open_to_others = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    return info.st_uid in (0, os.getuid()) and (
        not open_to_others or bool(info.st_mode & stat.S_ISVTX)
    )


def _open_private(parent: str, name: str, path: str, *, create: bool = True) -> int:
    """``parent/name`` opened (created when missing, if ``create``) without following a link,
    relative to the parent held open, and checked on the descriptor; ``path`` names it in
    messages."""
    try:
        parent_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise ServerDirError(f"cannot open {shown(parent)}: {exc.strerror}") from None
    try:
        if not _safe_parent(f"{_VIA}{parent_fd}"):
            raise ServerDirError(f"{shown(parent)} is writable by other users and not sticky")
        try:
            if create:
                os.mkdir(name, 0o700, dir_fd=parent_fd)
        except FileExistsError:
            pass
        except OSError as exc:
            raise ServerDirError(f"cannot create {path}: {exc.strerror}") from None
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(name, flags, dir_fd=parent_fd)
        except OSError as exc:
            if exc.errno in (errno.ENOTDIR, errno.ELOOP):  # a file, or a link not followed
                raise ServerDirError(f"{path} is not a directory (a link or a file)") from None
            raise ServerDirError(f"cannot open {path}: {exc.strerror}") from None
    finally:
        os.close(parent_fd)
    try:
        _check_private(path, os.fstat(fd))
    except ServerDirError:
        os.close(fd)
        raise
    return fd


def _check_private(path: str, info: os.stat_result) -> None:
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
