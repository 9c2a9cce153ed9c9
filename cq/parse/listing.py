"""The Python and Rust files of a tree as rg lists them: listed once per search.

Three parts of a question's search need the tree's file list: the rewriter's vocabulary (keyed
on it), the index (which files to keep current) and the semantic stage's answer cache (keyed
on the Python files). Each ran ``rg --files`` of its own, three walks of the tree per
question; the search's ``Corpus`` now holds one ``Listing`` they share, run by whichever asks
first (the index's thread and the rewrite ask at once: the second waits for the first).
rg's rules decide what is listed: ignore files respected, hidden files as rg's defaults. A
part that lists with other options (the search's --include/--exclude, --hidden,
--no-ignore) runs ``list_tree`` with them itself.
"""

from __future__ import annotations

import os
import subprocess
import threading
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
