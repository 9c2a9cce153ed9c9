"""Confinement: every path a search request names stays inside its root, after symlinks.

A request names paths in four places: the root, ``in_dir`` (handed to rg as its search path,
which rg follows even when it is a symbolic link), the include/exclude globs, and a profile
given as a file. ``confine_request`` checks the first three once and resolves the root to
its real path, once (``cq.settings.settle`` calls it at a search's front, before anything
reads against the root, the profile included), so the CLI, the MCP server and any other
caller share one rule and every stage sees the same root however it was spelt (relative,
through a link). A profile file is
read only through ``read_profile_file`` (``cq.settings`` calls it once per search), which
applies the same rule, on the command line too (see there); a profile
named by name reaches only the user's profiles dir or the presets. The MCP server adds
``server_root`` for the ``root`` a client may pass.

What stays inside without a check here: rg never follows a symbolic link it meets while
walking (cq does not pass ``--follow``), so a linked file or directory inside the tree that
points elsewhere is not searched, and the later stages read only the files rg reported; the
one stage that opens other files (Rust parent modules, ``cq.rank.rust_tests``) asks
``inside`` first.

A refusal is a ``UsageError`` whose message depends only on the text the caller gave and the
root, never on whether a path outside the root exists: the resolved path is checked before
anything is opened, and is not printed.
"""

from __future__ import annotations

import errno
import os
import posixpath
import re
import stat

import msgspec

from cq.errors import UsageError
from cq.model import SearchRequest
from cq.rooted import open_inside

MAX_PROFILE_BYTES = 1 << 20  # a profile is a few lines of TOML; this only bounds a bad file

_PROFILE_NAME = re.compile(r"[A-Za-z0-9_-]+")
_GLOB_PARTS = re.compile(r"[/\\{},]")  # path separators and brace alternatives


def confine_request(request: SearchRequest) -> SearchRequest:
    """The request, once every path it names is inside its root, with its root's real path;
    ``UsageError`` otherwise.

    ``in_dir`` becomes its real path relative to the root (from an absolute path, through a
    link, ``..``), so rg reports paths relative to the root as for any other search.
    """
    if not os.path.exists(request.root):
        raise UsageError(f"root does not exist: {request.root}")
    if not os.path.isdir(request.root):
        raise UsageError(f"root is not a directory: {request.root}")
    _check_readable(request.root)
    root = os.path.realpath(request.root)  # the one resolution of the root
    for glob in (*request.include, *request.exclude):
        _check_glob(glob, request.root, root)
    in_dir = _confine_in_dir(request.in_dir, root)
    if (in_dir, root) == (request.in_dir, request.root):
        return request
    return msgspec.structs.replace(request, in_dir=in_dir, root=root)


def _check_readable(root: str) -> None:
    """rg runs in the root and lists it: a root cq may not enter or list is a usage error,
    not a failed rg run (``--no-messages`` would leave it unexplained)."""
    try:
        os.stat(os.path.join(root, "."))  # needs search (x) permission on the root
        with os.scandir(root):  # needs read (r) permission
            pass
    except OSError as exc:
        raise UsageError(f"root is not readable: {root} ({exc.strerror})") from None


def inside(real_root: str, path: str) -> bool:
    """Whether ``path`` resolves (following every symbolic link) to ``real_root`` or below it;
    ``real_root`` is already resolved (``os.path.realpath``)."""
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def in_part(path: str, in_dir: str | None) -> bool:
    """Whether a root-relative ``path`` lies in the part of the root ``--in`` names (the whole
    root when none): that directory or below it, or that file."""
    if not in_dir:
        return True
    part = posixpath.normpath(in_dir).strip("/")
    return part in (".", path) or path.startswith(part + "/")


def server_root(configured: str, given: str | None) -> str:
    """The root of an MCP search: the server's own; a ``root`` argument must name that same
    directory (after symlinks), since the server's root is the one a user chose at start-up."""
    if given is None or os.path.realpath(os.path.join(configured, given)) == os.path.realpath(
        configured
    ):
        return configured
    raise UsageError(
        f"root {given!r} is not this server's root ({configured}); "
        "the server searches only its --root (use in_dir for a subtree)"
    )


def is_profile_name(profile: str) -> bool:
    """A profile's name (``audit``, or one of the user's own), as opposed to a file (anything
    with a path separator or a ``.toml`` suffix)."""
    return _PROFILE_NAME.fullmatch(profile) is not None


def read_profile_file(profile: str, root: str) -> bytes | None:
    """None for a profile's name; else the bytes of the profile file (relative to the root, or
    absolute), which must be a regular file inside the root (its real path, resolved by
    ``confine_request``) of at most ``MAX_PROFILE_BYTES``.

    The command line is held to the root as MCP is, though it is the user's own terminal:
    ``cq agent install`` lets an agent run ``cq`` without asking (``allowed-tools``), so a
    file outside the root named on the command line is as much an agent's reach as one named
    in an MCP call (and a profile's error messages quote its keys). A user's own profiles
    live in their config dir and are chosen by name (``cq.profiles``), which no request can
    turn into another path."""
    if is_profile_name(profile):
        return None
    path = os.path.join(root, profile)
    if not inside(root, path):
        raise UsageError(
            f"profile {profile!r} is outside the root {root}: "
            "name a preset or a .toml file inside the root"
        )
    return read_small_file(path, profile, root=root)


def read_small_file(path: str, label: str, *, root: str | None = None) -> bytes:
    """The bytes of a profile: a regular file of at most ``MAX_PROFILE_BYTES``. Opened without
    blocking and checked on the open file, so a FIFO cannot hang the search; with ``root``,
    the open file must lie inside it (``cq.rooted``: no link swapped in since the check)."""
    try:
        if root is None:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        else:
            fd = open_inside(root, path)
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            raise UsageError(f"profile {label!r} is not a regular file") from None
        if exc.errno == errno.EXDEV:
            raise UsageError(f"profile {label!r} is outside the root {root}") from None
        raise UsageError(f"profile file not found: {label}") from None
    info = os.fstat(fd)  # before fdopen, which refuses a directory with its own error
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise UsageError(f"profile {label!r} is not a regular file")
    with os.fdopen(fd, "rb") as fh:
        if info.st_size > MAX_PROFILE_BYTES:
            raise UsageError(f"profile {label!r} is over {MAX_PROFILE_BYTES} bytes")
        return fh.read(MAX_PROFILE_BYTES)


def _confine_in_dir(in_dir: str | None, real_root: str) -> str | None:
    if not in_dir:
        return in_dir
    target = os.path.join(real_root, in_dir)
    if not inside(real_root, target):
        raise UsageError(f"--in {in_dir!r} leads outside the root {real_root}")
    if not os.path.exists(target):
        raise UsageError(f"--in path does not exist under the root: {in_dir}")
    if not (os.path.isdir(target) or os.path.isfile(target)):  # rg would block on a FIFO
        raise UsageError(f"--in {in_dir!r} is not a directory or a regular file")
    # rg names the files by the path it is given: through a link (``--in pkglink``) or a
    # detour (``../repo/pkg``) by names the index and the root's other paths do not use
    return os.path.relpath(os.path.realpath(target), real_root)


def _check_glob(glob: str, root: str, real_root: str) -> None:
    """rg matches globs against paths below its search path, so a glob cannot widen a search.
    A leading ``/`` anchors a glob at the directory rg runs in (rg's gitignore rule; cq runs
    rg in the root), so ``/*.py`` is the root's own Python files: accepted. Refused, since
    they would silently match nothing: a glob that climbs with ``..``, a Windows absolute
    path, and an absolute filesystem path, told apart from a root-anchored glob by its first
    component: the root's own path, or a literal name the root lacks but the filesystem root
    ``/`` has (``/etc/*``, ``/home/me/src/*.py``). Only the root and ``/``'s own entries,
    which every process may list, are looked at, so nothing is learnt about other paths."""
    body = glob.removeprefix("!")
    if ".." in _GLOB_PARTS.split(body):
        raise UsageError(f"glob {glob!r} climbs out of the root with '..'")
    if body.startswith("\\") or _DRIVE.match(body):
        raise UsageError(f"glob {glob!r} is absolute: globs are relative to the root")
    if not body.startswith("/"):
        return
    for spelling in {root.rstrip(os.sep), real_root.rstrip(os.sep)} - {""}:
        if body == spelling or body.startswith(spelling + "/"):
            anchored = "/" + body[len(spelling) :].lstrip("/")
            raise UsageError(
                f"glob {glob!r} is absolute: globs are relative to the root; "
                f"anchor one at the root with a leading '/': {anchored!r}"
            )
    first = body.lstrip("/").split("/", 1)[0]
    literal = first and not _GLOB_SPECIAL.search(first)
    if literal and not os.path.lexists(os.path.join(root, first)) and first in _top_level():
        raise UsageError(
            f"glob {glob!r} is absolute: globs are relative to the root "
            "(a leading '/' anchors one at the root)"
        )


_DRIVE = re.compile(r"[A-Za-z]:[\\/]")  # C:\ or C:/
_GLOB_SPECIAL = re.compile(r"[*?\[\]{}\\]")


def _top_level() -> frozenset[str]:
    try:
        return frozenset(os.listdir("/"))
    except OSError:
        return frozenset()
