"""The Python and Rust files of a tree as rg lists them: listed once per search.

Three parts of a question's search need the tree's file list: the rewriter's vocabulary (keyed
on it), the index (which files to keep current) and the semantic stage's answer cache (keyed
on the Python files). Each ran ``rg --files`` of its own, three walks of the tree per
question; the search's ``Corpus`` now holds one ``Listing`` they share, run by whichever asks
first (the index's thread and the rewrite ask at once: the second waits for the first).
rg's rules decide what is listed: ignore files respected, hidden files as rg's defaults. A
part that lists with other options (the search's --include/--exclude, --hidden,
--no-ignore) runs ``list_tree`` with them itself.

The index of a root cq has not indexed yet only needs to know whether its files hold more
source than a search indexes itself; it reads rg's list as rg writes it
(``Listing.files_until``) and stops rg once they do, instead of walking the rest of a large
tree (the stdlib with its site-packages: 19,215 files, ~190 CPU-ms listed and stat'ed, most
of it beside the question's own work on two cores).
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

from cq.tools import find_rg, rg_types

PYTHON_RUST = rg_types("python", "rust")
_TIMEOUT_S = 30.0


def list_tree(root: Path, options: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The Python and Rust files under ``root``, sorted, relative (``options``: more rg
    flags). Raises ``OSError`` when rg cannot run; a tree rg could list only in part (an
    unreadable directory: rg exits with 2) gives the part it listed."""
    argv = [find_rg(), "--no-config", "--no-messages", "--files", "--null", *PYTHON_RUST, *options]
    try:
        done = subprocess.run(
            [*argv, "--", "."],
            cwd=root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_TIMEOUT_S,
            check=False,
        )
    except subprocess.SubprocessError as exc:
        raise OSError(f"rg --files: {exc}") from exc
    # NUL-separated: a file name may hold a newline (or any other line break) but no NUL;
    # a name that is not UTF-8 as the search reads it (os.fsdecode)
    names = os.fsdecode(done.stdout).split("\0")
    return tuple(sorted(_relative(n) for n in names if n))


def list_tree_until(root: Path, enough: Callable[[str], bool]) -> tuple[str, ...] | None:
    """``list_tree(root)``, handing ``enough`` each file as rg writes it (in rg's order,
    which its threads vary); the first time it answers True, rg is stopped and the answer is
    None. An exception from ``enough`` stops rg too. Raises ``OSError`` as ``list_tree``."""
    argv = [find_rg(), "--no-config", "--no-messages", "--files", "--null", *PYTHON_RUST]
    try:
        rg = subprocess.Popen(
            [*argv, "--", "."],
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise OSError(f"rg --files: {exc}") from exc
    assert rg.stdout is not None
    timed_out = threading.Event()

    def stop() -> None:
        timed_out.set()
        rg.kill()

    watchdog = threading.Timer(_TIMEOUT_S, stop)
    watchdog.daemon = True
    watchdog.start()
    names: list[str] = []
    rest = b""
    try:
        while chunk := rg.stdout.read1(1 << 16):
            *whole, rest = (rest + chunk).split(b"\0")
            for raw in whole:
                if raw:
                    name = _relative(os.fsdecode(raw))
                    names.append(name)
                    if enough(name):
                        return None
    finally:
        watchdog.cancel()
        if rg.poll() is None:
            rg.kill()
        rg.stdout.close()
        rg.wait()
    if timed_out.is_set():
        raise OSError(f"rg --files: timed out after {_TIMEOUT_S:.0f} s")
    return tuple(sorted(names))


def _relative(path: str) -> str:
    path = path.replace(os.sep, "/")
    return path[2:] if path.startswith("./") else path


class Listing:
    """``list_tree(root)`` run once, by whichever thread asks first."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._files: tuple[str, ...] | None = None
        self._error: OSError | None = None

    def files(self) -> tuple[str, ...]:
        """The listed files; raises ``OSError`` (each time) when rg could not list them."""
        with self._lock:
            if self._files is None and self._error is None:
                try:
                    self._files = list_tree(self.root)
                except OSError as exc:
                    self._error = exc
            if self._error is not None:
                raise self._error
            return self._files  # type: ignore[return-value]

    def files_until(self, enough: Callable[[str], bool]) -> tuple[str, ...] | None:
        """``files()``, handing ``enough`` each file (as rg lists them when nobody has yet);
        None once it answers True. A listing stopped that way is not kept: a later ``files()``
        lists the tree again. Raises ``OSError`` as ``files()``."""
        with self._lock:
            if self._files is None and self._error is None:
                try:
                    listed = list_tree_until(self.root, enough)
                except OSError as exc:
                    self._error = exc
                    raise
                if listed is not None:
                    self._files = listed
                return listed
            if self._error is not None:
                raise self._error
            files: tuple[str, ...] = self._files  # type: ignore[assignment]
            return None if any(enough(name) for name in files) else files
