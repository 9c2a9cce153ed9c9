"""What Pyrefly may see of a searched root: a view of links, and the config cq writes for it.

A searched repository is untrusted. Left to itself, Pyrefly discovers a Python interpreter
(a repository's ``.venv/bin/python``, a ``python-interpreter-path`` or
``python-interpreter-find-command`` in its ``pyrefly.toml`` / ``pyproject.toml``, a mypy
``python_executable``) and runs it to ask for ``sys.path``: cloning a repository and searching
it ran the repository's program. Its config may also name a ``search-path`` outside the root,
and a link inside the root may point anywhere: either put content from outside the root into
a report (the ``Literal`` type of a secret).

So cq chooses everything Pyrefly reads:
- the config is cq's own, given to the language server as ``pyrefly.configPath`` (which
  replaces config discovery for every file, the repository's configs included): no
  interpreter query, no site-packages, a search path inside the view only;
- the workspace is a *view*: a place in cq's scratch space from which Pyrefly sees the root
  without any link leading out of it. A root without such links is seen through one link
  to it; a directory that holds one (at any depth) is mirrored, its other entries linked
  whole, the links out (and links to directories) left out. Pyrefly resolves imports within
  the view and reports view paths, which the connection translates back to the root's
  (``translate_out`` / ``translate_in``), so the rest of the stage sees root paths.
- the child runs with ``PATH`` set to an empty directory and without the environment that
  points at interpreters (``VIRTUAL_ENV``, ``CONDA_*``, ``PYTHON*``).
What Pyrefly then reads: the root's Python files (through the view) and its own bundled
typeshed stubs; nothing else.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from cq.model.language import EXTENSIONS

_PYTHON = EXTENSIONS["python"]  # case-sensitive here, as Pyrefly's include globs are
# What Pyrefly does not check in the view: its own default excludes (hidden directories,
# caches, ``venv``), anchored at the view, and installed packages.
_EXCLUDED = (".[!/.]*/**", "__pycache__", "node_modules", "venv/**", "site-packages/**")
# Environment names dropped from the child's: each points Pyrefly (or a Python it might
# start) at an interpreter or a module path.
_DROPPED_ENV_PREFIXES = ("PYTHON", "VIRTUAL_ENV", "CONDA", "PYREFLY", "PIXI", "UV_")


class WorkspaceView:
    """The view of one root for one language server, and its config file."""

    def __init__(self, root: str, scratch: Path) -> None:
        self.root = root  # its real path (``cq.settings.settle``)
        key = hashlib.sha256(self.root.encode("utf-8", "surrogateescape")).hexdigest()[:12]
        self.base = scratch / "views"
        self.dir = self.base / f"{key}-{os.getpid()}-{id(self):x}"
        self.config = self.dir.with_suffix(".toml")
        self.bin = scratch / "empty-bin"
        self._root_uri = Path(self.root).as_uri()
        self._view_uri = self.dir.as_uri()
        self._view_prefix = f"{self.dir}{os.sep}"
        self.python_files = 0  # counted by ``build``

    def build(self) -> None:
        """Make a fresh view of the root and write the config."""
        _remove_orphans(self.base)
        self.base.mkdir(parents=True, exist_ok=True)
        self.bin.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(self.dir, ignore_errors=True)
        with contextlib.suppress(OSError):
            self.dir.unlink()
        tainted, self.python_files = _tainted_dirs(self.root)
        if self.root in tainted:
            self._mirror(self.root, self.dir, tainted)
        else:
            os.symlink(self.root, self.dir)  # nothing in the root leads out of it
        self.config.write_text(self._config_text(), encoding="utf-8")

    def _mirror(self, source: str, target: Path, tainted: set[str]) -> None:
        """Mirror a directory holding (at some depth) a link out of the root: its clean
        subdirectories and files are linked whole, tainted ones mirrored in turn, links out
        of the root and linked directories left out."""
        target.mkdir(parents=True, exist_ok=True)
        try:
            with os.scandir(source) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            try:
                if entry.is_symlink():
                    link_to = _file_inside(entry.path, self.root)
                elif entry.is_dir():
                    if entry.path in tainted:
                        self._mirror(entry.path, target / entry.name, tainted)
                        continue
                    link_to = entry.path
                else:
                    link_to = entry.path
                if link_to is not None:
                    os.symlink(link_to, target / entry.name)
            except OSError:
                continue

    def link(self, path: str) -> bool:
        """Whether ``path`` (a file of the root, perhaps new since the view was built) is
        seen through the view; a file new in a mirrored directory is linked now when its
        real path lies inside the root."""
        relative = os.path.relpath(os.path.abspath(path), self.root)
        if relative.startswith(os.pardir):
            return False
        target = self.dir / relative
        if os.path.lexists(target):
            return True
        real = os.path.realpath(path)
        parent = os.path.realpath(target.parent)
        if not _inside(real, self.root) or not os.path.isfile(real) or _inside(parent, self.root):
            return False  # out of the root, or a directory seen through a link (already there)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(real, target)
        except OSError:
            return False
        return True

    def remove(self) -> None:
        if self.dir.is_symlink():
            with contextlib.suppress(OSError):
                self.dir.unlink()
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
        with contextlib.suppress(OSError):
            self.config.unlink()

    def environment(self, scratch: Path) -> dict[str, str]:
        """The child's environment: cq's, less what names an interpreter, with ``PATH`` an
        empty directory (nothing to run, whatever a config says)."""
        env = {
            name: value
            for name, value in os.environ.items()
            if not name.upper().startswith(_DROPPED_ENV_PREFIXES)
        }
        env.update(TMPDIR=str(scratch), PYREFLY_COLOR="never", PATH=str(self.bin))
        return env

    # -- translation between root and view ---------------------------------------------------

    def translate_out(self, value: Any) -> Any:
        """A message for Pyrefly: the root's file URIs become the view's."""
        if isinstance(value, str):
            if value == self._root_uri or value.startswith(f"{self._root_uri}/"):
                return self._view_uri + value[len(self._root_uri) :]
            return value
        return _walk(value, self.translate_out)

    def translate_in(self, value: Any) -> Any:
        """A message from Pyrefly: the view's file URIs and paths become the root's."""
        if isinstance(value, str):
            if value.startswith("file:"):
                # bytes that are not UTF-8 kept (as os.fsdecode), so as_uri spells them again
                path = unquote(urlparse(value).path, errors="surrogateescape")
                if path == str(self.dir) or path.startswith(self._view_prefix):
                    return Path(self.root + path[len(str(self.dir)) :]).as_uri()
                return value
            if str(self.dir) in value:
                return value.replace(str(self.dir), self.root)
            return value
        return _walk(value, self.translate_in)

    def _config_text(self) -> str:
        view = str(self.dir)
        search_path = [view]
        if os.path.isdir(os.path.join(self.root, "src")):
            search_path.append(os.path.join(view, "src"))  # the src layout's import root
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        lines = [
            f"project-includes = {_toml([f'{view}/**/*{ext}' for ext in _PYTHON])}",
            # The root's import roots are searched after Pyrefly's bundled stubs, as Pyrefly
            # orders the import roots it infers itself: a root holding the stdlib's sources
            # resolves ``import os`` to the stub (checking the real ``os.py`` and what it
            # imports did not answer within the stage's budget on the stdlib).
            "search-path = []",
            f"site-package-path = {_toml(search_path)}",
            "skip-interpreter-query = true",
            "disable-search-path-heuristics = true",
            # Pyrefly's default excludes match hidden directories anywhere in a path, and the
            # view sits in cq's cache dir (``~/.cache``): anchored at the view instead.
            f"project-excludes = {_toml([f'{view}/**/{name}' for name in _EXCLUDED])}",
            "disable-project-excludes-heuristics = true",
            f"python-version = {_toml(version)}",
            f"python-platform = {_toml(sys.platform)}",
        ]
        return "\n".join(lines) + "\n"


def _walk(value: Any, translate: Any) -> Any:
    if isinstance(value, dict):
        return {key: translate(item) for key, item in value.items()}
    if isinstance(value, list):
        return [translate(item) for item in value]
    return value


def _tainted_dirs(root: str) -> tuple[set[str], int]:
    """The directories of the root (the root included) that hold, at some depth, a link
    leading out of the root or to a directory, and how many Python files the walk saw.
    Hidden directories are not read: no import reaches a name with a dot, and the config keeps
    Pyrefly's checking out of them."""
    tainted: set[str] = set()
    python_files = 0
    stack = [root]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_symlink():
                    if _file_inside(entry.path, root) is None:
                        tainted.add(current)
                elif entry.is_dir() and not entry.name.startswith("."):
                    stack.append(entry.path)
                elif entry.name.endswith(_PYTHON):
                    python_files += 1
            except OSError:
                tainted.add(current)
    for path in list(tainted):
        while _inside(path, root) and path != root:
            path = os.path.dirname(path)
            tainted.add(path)
    return tainted, python_files


def _file_inside(link: str, root: str) -> str | None:
    """The real path of ``link`` when it leads to a regular file inside the root; else None
    (a link out of the root, to a directory, or dangling)."""
    real = os.path.realpath(link)
    return real if _inside(real, root) and os.path.isfile(real) else None


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _toml(value: Any) -> str:
    """A TOML value: JSON's strings and arrays of strings are valid TOML."""
    return json.dumps(value)


def _remove_orphans(base: Path) -> None:
    """Views left by cq processes that are gone (killed before they could remove theirs)."""
    with contextlib.suppress(OSError):
        for entry in base.iterdir():
            pid = entry.name.split("-")[1] if entry.name.count("-") >= 2 else ""
            pid = pid.split(".")[0]
            if pid.isdigit() and not _alive(int(pid)):
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        entry.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
