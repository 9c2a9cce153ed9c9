"""A large update in a process of its own: the build's Python work off the search's GIL.

In: an update's ``Plan`` (``build.py``: what moved, nothing read yet) and the search's list of
the tree's files. Out: what ``update_index`` gives, the index opened as the child committed
it. The parent's update thread hands the update to ``python -m cq.index.spawn`` when it
reads at least ``index.spawn_bytes`` of source (a first build, a checkout of another branch);
a smaller one, and an index held in memory (``--no-cache``), stays in the thread.

Why: in the thread, the rows' Python work (scanning units, splitting words, tantivy
documents: ~0.8 CPU-s on the 19 MB tree of bench/index_speed.py) takes turns on the GIL with
the search's own Python (rewrite, classification, enrichment), so both ran at half speed:
at load ~1, a cold search (CQ_SEMANTIC=0) took 3.05 s with its index built inside against
1.26 s ``--no-index``, the index's own time 2.55 s, while a ``cq index`` beside the same search
``--no-index`` finished in 2.0-2.2 s with the search at 1.6-2.3 s. The child reads, hashes,
scans, indexes and commits on its own; the parent only waits.

The wire: length-prefixed msgpack frames. The parent writes one ``Request`` and keeps the
child's stdin open: the child exits when it reads end-of-file (cq is gone, however it died).
The child answers ``Status`` frames (progress, at most every ``_STATUS_S``) and one outcome:
``Done``, ``Large`` (``TooLarge``) or ``Failed`` (the error's kind and message, raised again
in the parent as the same kind, so a failing index is handled as in the thread). A child that
cannot start or dies without an outcome leaves the update to the thread. A search that stops
(its progress callback raises) kills the child: tantivy commits atomically, so the index is
left as last committed.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

import msgspec

from cq.index.build import (
    IndexUpdate,
    OpenIndex,
    Progress,
    TooLarge,
    finish_update,
    has_index,
    open_committed,
    plan_update,
    update_index,
)
from cq.model.index_tuning import IndexTuning
from cq.parse import Listing

_STATUS_S = 0.1  # progress frames: often enough for a prompt stop, few enough to cost nothing
_HEADER = struct.Struct("!I")


class Request(msgspec.Struct, frozen=True, kw_only=True):
    root: str
    build_limit: int
    tuning: IndexTuning
    files: tuple[str, ...] | None  # the search's listing (None: the child lists the tree)


class Status(msgspec.Struct, frozen=True, tag=True):
    text: str


class Done(msgspec.Struct, frozen=True, tag=True):
    update: IndexUpdate


class Large(msgspec.Struct, frozen=True, tag=True):
    source_bytes: int


class Failed(msgspec.Struct, frozen=True, tag=True):
    kind: str  # OSError | ValueError | RuntimeError
    message: str


Frame = Status | Done | Large | Failed
_ERRORS: dict[str, type[Exception]] = {e.__name__: e for e in (OSError, ValueError, RuntimeError)}


def update_spawning(
    root: Path,
    progress: Progress | None,
    *,
    persist: bool,
    build_limit: int,
    tuning: IndexTuning,
    listing: Listing | None,
) -> tuple[OpenIndex, IndexUpdate]:
    """``update_index``, in a child process when the update reads ``tuning.spawn_bytes`` or
    more and the index is on disk. A root without an index yet starts the child before the
    tree is listed, so its start-up overlaps the listing and the plan; when the plan finds
    less to read, the child is dismissed and the thread builds."""
    child = _start() if persist and not has_index(root) else None
    try:
        plan = plan_update(
            root, persist=persist, build_limit=build_limit, tuning=tuning, listing=listing
        )
        if persist and plan.pending_bytes >= tuning.spawn_bytes:
            child = child or _start()
            if child is not None:
                files = listing.files() if listing is not None else None
                request = Request(
                    root=str(root), build_limit=build_limit, tuning=tuning, files=files
                )
                update, child = _finish(child, request, progress), None
                if update is not None:
                    return _opened(root, update, plan.started)
    finally:
        if child is not None:  # not needed after all
            child.kill()
            _close(child)
    return finish_update(plan, progress, persist=persist, tuning=tuning)


def _opened(root: Path, update: IndexUpdate, started: float) -> tuple[OpenIndex, IndexUpdate]:
    """The index as the child committed it; its time counted from this update's start."""
    elapsed = round((time.perf_counter() - started) * 1000, 1)
    update = msgspec.structs.replace(update, milliseconds=elapsed, files_apart=update.files_updated)
    return open_committed(root), update


def _start() -> subprocess.Popen[bytes] | None:
    """``python -m cq.index.spawn`` running this cq's code (None: it cannot start)."""
    package = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH")
    env = os.environ | {"PYTHONPATH": package + (os.pathsep + path if path else "")}
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "cq.index.spawn"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
    except OSError:
        return None


def _finish(
    child: subprocess.Popen[bytes], request: Request, progress: Progress | None
) -> IndexUpdate | None:
    """Send ``request``, relay the child's progress, return its update (None: it died
    without saying why)."""
    assert child.stdin is not None and child.stdout is not None
    done = False
    try:
        _write(child.stdin, msgspec.msgpack.encode(request))
        decoder = msgspec.msgpack.Decoder(Frame)
        while (data := _read(child.stdout)) is not None:
            frame = decoder.decode(data)
            if isinstance(frame, Status):
                if progress is not None:
                    progress(frame.text)  # raises when the search stopped
            elif isinstance(frame, Done):
                done = True
                return frame.update
            elif isinstance(frame, Large):
                done = True
                raise TooLarge(frame.source_bytes)
            else:
                done = True
                raise _ERRORS.get(frame.kind, RuntimeError)(frame.message)
        return None
    except (OSError, msgspec.DecodeError):
        return None
    finally:
        if not done:  # the search stopped or the child failed: the index stays as committed
            child.kill()
        _close(child)


def _close(child: subprocess.Popen[bytes]) -> None:
    assert child.stdin is not None and child.stdout is not None
    child.stdin.close()  # end-of-file: a child that is done exits
    child.stdout.close()
    child.wait()


def _write(stream: IO[bytes], data: bytes) -> None:
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read(stream: IO[bytes]) -> bytes | None:
    """One frame, None at end of file."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    return data if len(data) == size else None


def _serve() -> None:
    """The child: one update, then exit; end-of-file on stdin (cq gone) ends it at once."""
    data = _read(sys.stdin.buffer)
    if data is None:
        return
    request = msgspec.msgpack.decode(data, type=Request)
    threading.Thread(target=_exit_at_eof, args=(sys.stdin.buffer,), daemon=True).start()
    out = os.fdopen(os.dup(1), "wb")  # the frames' own stream: nothing else writes to it
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    lock = threading.Lock()
    last = [0.0]

    def send(frame: Frame) -> None:
        with lock:
            _write(out, msgspec.msgpack.encode(frame))

    def status(text: str) -> None:
        now = time.monotonic()
        if now - last[0] >= _STATUS_S:
            last[0] = now
            send(Status(text))

    root = Path(request.root)
    try:
        _, update = update_index(
            root,
            status,
            build_limit=request.build_limit,
            tuning=request.tuning,
            listing=None if request.files is None else Listing.of(root, request.files),
        )
    except TooLarge as exc:
        send(Large(exc.source_bytes))
    except (OSError, ValueError, RuntimeError) as exc:
        kind = next((k for k, e in _ERRORS.items() if isinstance(exc, e)), "RuntimeError")
        send(Failed(kind, str(exc)))
    else:
        send(Done(update))


def _exit_at_eof(stream: IO[bytes]) -> None:
    stream.read()
    os._exit(0)


if __name__ == "__main__":
    _serve()
