"""Output to a client's pipe or socket, written by the client itself: a search process never
blocks on a reader.

A search process writes to the client's terminal or file directly (on the client's own
descriptor: ``isatty`` and colour are the client's). A pipe or a socket can fill up: ``cq
search ... | less`` that nobody scrolls, an agent that reads its output later. A search
process blocked there would hold its slot, and the server's warm processes, for as long as
nobody reads. So on those the search process sends the bytes to the client (``output``
frames on the client's connection) and the client writes them, from a thread of its own
(``Writer``): it blocks where an in-process search would have, and it keeps reading frames
meanwhile, so the search process never waits for it either. A reader that goes away is the
client's ``BrokenPipeError``, and ends the search as it would in-process.

Standard library only: the client imports this module on every search.
"""

from __future__ import annotations

import _queue
import _thread
import binascii
import contextlib
import io
import os
import stat

from cq.server.wire import Channel

_CHUNK = 1 << 20  # bytes per ``output`` frame, far under ``wire.MAX_FRAME`` once in base64


def relayed(fd: int) -> bool:
    """Whether output on ``fd`` goes through the client: a pipe or a socket."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class RelayOut(io.RawIOBase):
    """A search process's raw stream for the client's ``number`` (1 or 2), on descriptor
    ``fd``: bytes written go to the client in ``output`` frames. ``fileno`` stays the
    client's descriptor (``fstat`` and ``isatty`` answer for it)."""

    def __init__(self, client: Channel, number: int, fd: int) -> None:
        super().__init__()
        self._client = client
        self._number = number
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return False

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        chunk = bytes(data[:_CHUNK])
        text = binascii.b2a_base64(chunk, newline=False).decode("ascii")
        self._client.send({"kind": "output", "fd": self._number, "data": text})
        return len(chunk)


class Writer:
    """The client's side: ``output`` frames queued and written to this process's own
    descriptors by a thread, so the connection is read on while a reader dawdles. On the
    interpreter's own ``_thread`` and ``_queue``: importing ``threading`` costs the client a
    visible part of a warm search (bench/results/2026-11-29-figures-from-cq.md)."""

    def __init__(self) -> None:
        self._queue: _queue.SimpleQueue[tuple[int, bytes] | None] | None = None
        self._running = _thread.allocate_lock()  # held by the thread while it writes
        self.broken = False  # a reader went away (EPIPE): what is left is not written
        self.started = False  # some output came
        self.failed = False  # writing failed otherwise (said on stderr)

    def put(self, message: dict[str, object]) -> None:
        data = binascii.a2b_base64(str(message["data"]))
        self.started = True
        if self._queue is None:
            self._queue = _queue.SimpleQueue()
            self._running.acquire()
            _thread.start_new_thread(self._write, (self._queue,))
        self._queue.put((int(str(message["fd"])), data))

    def finish(self) -> None:
        """Wait until everything queued is written (as an in-process search waits for its
        last write); ^C interrupts it."""
        if self._queue is None:
            return
        self._queue.put(None)
        self._running.acquire()  # released when the thread ends
        self._running.release()

    def _write(self, queue: _queue.SimpleQueue[tuple[int, bytes] | None]) -> None:
        try:
            while (item := queue.get()) is not None:
                if not self.broken:
                    self._write_one(*item)
        finally:
            self._running.release()

    def _write_one(self, number: int, data: bytes) -> None:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(number, view) :]
        except BrokenPipeError:
            self.broken = True
        except OSError as exc:  # a full disk: said on stderr, exit 2, as in-process
            with contextlib.suppress(OSError):
                os.write(2, f"cq: cannot write the output: {exc.strerror}\n".encode())
            self.failed = self.broken = True
