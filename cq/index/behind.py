"""A first build too large to wait for (or cut by a search's deadline), in a process of its
own, behind the searches.

In: a root and the search's ``IndexTuning``. Out: the root's index, built by a detached
``python -m cq.index.behind`` that the search starts when it ends (``evidence.py``) and that
outlives it on purpose: the next questions use the index once it is there. It runs at a
lower CPU priority (its pool's workers inherit it), so a search the user waits for gets the
CPU first, and one per root at a time: it holds an exclusive lock on ``<index dir>.building``
while it builds, and a search that finds the lock held starts none. Its output goes nowhere:
a build that fails leaves the index as last committed, and the next question tries again.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
from pathlib import Path

import msgspec

from cq.index.location import index_dir
from cq.model.index_tuning import IndexTuning

_NICE = 10  # not tuned: any lower priority lets the waited-for search go first


def _lock_path(root: Path) -> Path:
    directory = index_dir(root)
    return directory.with_name(f"{directory.name}.building")


def building(root: Path) -> bool:
    """Whether a builder holds the root's lock now."""
    try:
        fd = os.open(_lock_path(root), os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing releases a lock taken here
    return False


def start(root: Path, tuning: IndexTuning) -> None:
    """Start the root's builder, detached, unless one is at work."""
    if building(root):
        return
    argv = [sys.executable, "-m", "cq.index.behind", os.fsdecode(root)]
    argv.append(msgspec.json.encode(tuning).decode())
    with contextlib.suppress(OSError):
        subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # neither the terminal's ^C nor cq's exit ends it
            cwd="/",
        )


def main(argv: list[str]) -> int:
    from cq.index.build import TooLarge, update_index

    root = Path(argv[0])
    tuning = msgspec.json.decode(argv[1], type=IndexTuning)
    os.nice(_NICE)
    lock = _lock_path(root)
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return 0  # another builder started first
    with contextlib.suppress(TooLarge):
        update_index(root, build_limit=tuning.auto_build_bytes, tuning=tuning)
    return 0


if __name__ == "__main__":
    with contextlib.suppress(Exception):
        sys.exit(main(sys.argv[1:]))
