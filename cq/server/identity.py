"""What a server must share with a client to answer for it: cq's version, code and settings.

A client and a server compute ``identity()`` each from their own process; a server whose
identity differs is replaced, never asked. The code part hashes every source file of the
package (as ``cq.cache.payloads`` does for a cache namespace: an edit in a checkout, not only
a version bump, makes a new server). The settings part covers what a long-lived process reads
once and keeps: the Python environment, where the cache is (its store stays open), the cache bound,
the rg binary (found once per process) and the server's own idle time. Everything else of the
environment travels with each request and applies to that request only.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import time
from collections.abc import Mapping

# Read once by a long-lived process (see the module docstring); the rest is per request.
SERVER_SETTINGS = (
    "CQ_CACHE_DIR",
    "XDG_CACHE_HOME",
    "HOME",
    "CQ_CACHE_MAX_MB",
    "CQ_PYREFLY",
    "CQ_SERVER_IDLE_S",
    "CQ_SERVER_PROCESS_MAX_MB",
)

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def identity(memo_dir: str | None = None) -> dict[str, str]:
    """``version``, ``code`` and ``settings`` of this process, each a short string;
    ``memo_dir``: where ``code_digest`` may keep its memo (the server's private directory)."""
    from cq import __version__

    return {
        "version": __version__,
        "code": code_digest(memo_dir),
        "settings": settings_digest(),
    }


# A source file changed this recently may change again within the file system's clock tick
# (ctime is coarse: a few ms) without its stat changing: no memo is kept then.
_RACY_NS = 2_000_000_000
_MEMO = "code-digest"


def code_digest(memo_dir: str | None = None, package: str = _PACKAGE) -> str:
    """A hash of the cq package's sources and its shipped profiles (names and bytes, in a
    fixed order): two copies of the same cq (a checkout and its installed wheel) are one
    server's code. Every search through the server asks for it: in ``memo_dir`` it is kept
    with the files' stat (size, mtime, ctime, inode), and while none of them changed it is
    read from there instead of hashing the sources (~250 files; the cost of hashing them
    each search: bench/results/2026-11-29-figures-from-cq.md)."""
    files = _code_files(package)
    stats: list[str] = []
    racy = False
    now = time.time_ns()
    for relative, path in files:
        st = os.stat(path)
        stats.append(f"{relative}\0{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}")
        racy |= now - st.st_mtime_ns < _RACY_NS
    signature = hashlib.blake2b("\n".join(stats).encode(), digest_size=16).hexdigest()
    memo = os.path.join(memo_dir, _MEMO) if memo_dir is not None else None
    if memo is not None:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            with open(memo, encoding="ascii") as fh:
                kept, _, digest = fh.read().partition(" ")
            if kept == signature and digest:
                return digest
    digest = _hashed(files)
    if memo is not None and not racy:
        staging = f"{memo}.{os.getpid()}"
        with contextlib.suppress(OSError):
            with open(staging, "w", encoding="ascii") as fh:
                fh.write(f"{signature} {digest}")
            os.replace(staging, memo)
    return digest


def _code_files(package: str) -> list[tuple[str, str]]:
    """(name in the digest, path) of every file ``code_digest`` covers, in its order."""
    out: list[tuple[str, str]] = []
    skip = len(package) + 1
    for folder, dirs, names in os.walk(package):
        dirs.sort()
        for name in sorted(names):
            if name.endswith(".py"):
                path = f"{folder}/{name}"
                out.append((path[skip:], path))  # not os.path.relpath: its cost, per file
    # Where ``cq.profiles.profiles_dir`` finds them (not imported: the client starts lean).
    shipped = os.path.join(package, "_profiles")
    if not os.path.isdir(shipped):
        shipped = os.path.join(os.path.dirname(package), "profiles")
    for name in sorted(os.listdir(shipped)) if os.path.isdir(shipped) else ():
        if name.endswith(".toml"):
            out.append((name, os.path.join(shipped, name)))
    return out


def _hashed(files: list[tuple[str, str]]) -> str:
    digest = hashlib.blake2b(digest_size=8)
    for name, path in files:
        digest.update(name.encode() + b"\0")
        with open(path, "rb") as fh:
            digest.update(fh.read())
    return digest.hexdigest()


def install_key(environ: Mapping[str, str] = os.environ) -> str:
    """What names this install's server (its directory, ``paths.runtime_dir``): where the cq
    package is, its version and the settings (``settings_digest``). Two installs, or two
    values of a setting, each keep a server of their own warm instead of replacing each
    other's on every search; the code digest stays out of it, so an edited checkout replaces
    its own server rather than leaving the old one to idle out beside it."""
    from cq import __version__

    parts = [_PACKAGE, __version__, settings_digest(environ)]
    return hashlib.blake2b(os.fsencode("\0".join(parts)), digest_size=8).hexdigest()


def settings_digest(environ: Mapping[str, str] = os.environ) -> str:
    # The environment (venv) and Python version, not the executable's name: ``cq`` runs
    # ``.../bin/python3`` and ``python -m cq`` may be ``.../bin/python``, the same interpreter.
    parts = [sys.prefix, sys.version]
    parts += [f"{name}={environ.get(name, '')}" for name in SERVER_SETTINGS]
    # a value that is not UTF-8 (a cache dir's name) as the bytes the environment holds
    return hashlib.blake2b(os.fsencode("\0".join(parts)), digest_size=8).hexdigest()
