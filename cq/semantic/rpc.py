"""LSP base protocol over a child's stdio: Content-Length framing, JSON-RPC requests with
deadlines, answers to the few server-to-client requests Pyrefly sends.

Why not ``pygls``: its client (pygls 2.1 + lsprotocol 2025.0) was evaluated and fits badly
here. Importing ``pygls.lsp.client`` costs more than the stage's whole one-shot budget
(``python -X importtime``; figures: bench/results/2026-11-29-figures-from-cq.md); and it is
asyncio-based, while cq's search path is synchronous with threads, so it
would need an event loop in a thread of its own. What cq needs is six request kinds and a
reader, ~150 lines on ``msgspec.json`` (already a dependency, imports in ~5 ms).

One reader thread per connection decodes messages and wakes the waiting caller; a reply
that arrives after its deadline is dropped. A dead or stopped child shows as ``RpcError``
(EOF) or ``RpcTimeout`` (deadline), never a hang.
"""

from __future__ import annotations

import contextlib
import queue
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

import msgspec

_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder()


# The words of a reason that says the deadline, not Pyrefly, ended an answer: the stage reads
# them to remember a tree whose fresh server was not ready in time (``stage._cut_by_budget``).
NO_ANSWER_IN_TIME = "no answer in time"
NOT_WITHIN_BUDGET = "within the time budget"
BUDGET_PHRASES = (NO_ANSWER_IN_TIME, NOT_WITHIN_BUDGET)


class RpcError(Exception):
    """The server answered with an error, or the connection is gone."""


class RpcTimeout(RpcError):
    """No answer before the deadline (a hung or overloaded server)."""


class RpcCancelled(RpcError):
    """The server dropped the request because a document changed meanwhile (LSP codes
    -32800 RequestCancelled, -32801 ContentModified: Pyrefly cancels requests that arrive
    while it processes a ``didOpen``); ``batch`` asks again."""


_CANCELLED_CODES = (-32800, -32801)
_RETRIES = 5


class _Pending:
    __slots__ = ("code", "done", "error", "result")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: Any = None
        self.error: str | None = None
        self.code: int | None = None


ServerRequestHandler = Callable[[str, Any], Any]
NotificationHandler = Callable[[str, Any], None]
Translate = Callable[[Any], Any]

# The largest message body read from a server: a hostile or broken server announcing
# ``Content-Length: 1e14`` must not make cq allocate it. Pyrefly's largest answers (hover of
# a big class, a file's diagnostics) are kilobytes to a few megabytes.
MAX_FRAME_BYTES = 64 * 1024 * 1024
_MAX_HEADER_LINE = 8192


def _same(value: Any) -> Any:
    return value


class Connection:
    """JSON-RPC 2.0 over the stdin/stdout pipes of ``process``."""

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        on_request: ServerRequestHandler,
        on_notification: NotificationHandler,
        *,
        outgoing: Translate = _same,
        incoming: Translate = _same,
    ) -> None:
        """``outgoing`` / ``incoming`` rewrite every message on its way to and from the
        server (the workspace view's path translation, ``view.py``)."""
        self.process = process
        self._outgoing = outgoing
        self._incoming = incoming
        self._on_request = on_request
        self._on_notification = on_notification
        self._outbox: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._pending: dict[int, _Pending] = {}
        self._next_id = 0
        self.closed = threading.Event()
        self._reader = threading.Thread(target=self._read_loop, name="cq-lsp-reader", daemon=True)
        self._reader.start()
        self._writer = threading.Thread(target=self._write_loop, name="cq-lsp-writer", daemon=True)
        self._writer.start()

    def request(self, method: str, params: Any, timeout: float) -> Any:
        """Send a request and wait at most ``timeout`` seconds for its result."""
        outcome = self.batch([(method, params)], time.monotonic() + max(timeout, 0.0))[0]
        if isinstance(outcome, RpcError):
            raise outcome
        return outcome

    def batch(self, calls: list[tuple[str, Any]], deadline: float) -> list[Any]:
        """Send all requests at once (the server answers them in turn, without a round trip
        between them), then wait for each until ``deadline`` (``time.monotonic``). Each slot
        holds the result or the ``RpcError`` / ``RpcTimeout`` that stands for it; cancelled
        ones are asked again (a few times, within the deadline)."""
        results = self._batch_once(calls, deadline)
        for _ in range(_RETRIES):
            again = [i for i, r in enumerate(results) if isinstance(r, RpcCancelled)]
            if not again or time.monotonic() >= deadline:
                break
            retried = self._batch_once([calls[i] for i in again], deadline)
            for i, result in zip(again, retried, strict=True):
                results[i] = result
        return results

    def _batch_once(self, calls: list[tuple[str, Any]], deadline: float) -> list[Any]:
        sent: list[tuple[str, int, _Pending] | RpcError] = []
        for method, params in calls:
            with self._lock:
                self._next_id += 1
                ident = self._next_id
                pending = self._pending[ident] = _Pending()
            try:
                self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
                sent.append((method, ident, pending))
            except RpcError as exc:
                with self._lock:
                    self._pending.pop(ident, None)
                sent.append(exc)
        return [
            slot if isinstance(slot, RpcError) else self._wait(*slot, deadline) for slot in sent
        ]

    def _wait(self, method: str, ident: int, pending: _Pending, deadline: float) -> Any:
        try:
            while not pending.done.wait(min(0.05, max(deadline - time.monotonic(), 0.0))):
                if self.closed.is_set():
                    return RpcError(f"{method}: server exited")
                if time.monotonic() >= deadline:
                    self._cancel(ident)
                    return RpcTimeout(f"{method}: {NO_ANSWER_IN_TIME}")
        finally:
            with self._lock:
                self._pending.pop(ident, None)
        if pending.error is not None:
            kind = RpcCancelled if pending.code in _CANCELLED_CODES else RpcError
            return kind(f"{method}: {pending.error}")
        return pending.result

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def _cancel(self, ident: int) -> None:
        with contextlib.suppress(RpcError):
            self.notify("$/cancelRequest", {"id": ident})

    def _send(self, message: dict[str, Any]) -> None:
        """Queue a message for the writer thread: a stopped server whose pipe is full blocks
        that thread, never the search."""
        if self.closed.is_set():
            raise RpcError("server exited")
        body = _ENCODER.encode(self._outgoing(message))
        self._outbox.put(f"Content-Length: {len(body)}\r\n\r\n".encode("ascii") + body)

    def _write_loop(self) -> None:
        stdin = self.process.stdin
        try:
            while stdin is not None:
                stdin.write(self._outbox.get())
                stdin.flush()
        except (OSError, ValueError):
            self.closed.set()

    def _read_loop(self) -> None:
        stdout = self.process.stdout
        try:
            while stdout is not None:
                body = _read_message(stdout)
                if body is None:
                    break
                try:
                    self._dispatch(self._incoming(_DECODER.decode(body)))
                except msgspec.DecodeError:
                    continue
        except (OSError, ValueError):
            pass
        finally:
            self.closed.set()
            with self._lock:
                for pending in self._pending.values():
                    pending.error = "server exited"
                    pending.done.set()

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        ident = message.get("id")
        if method is None:
            with self._lock:
                pending = self._pending.get(ident) if isinstance(ident, int) else None
            if pending is not None:
                error = message.get("error")
                if isinstance(error, dict):
                    pending.error = str(error.get("message", error))
                    pending.code = error.get("code")
                elif error:
                    pending.error = str(error)
                pending.result = message.get("result")
                pending.done.set()
        elif ident is None:
            self._on_notification(method, message.get("params"))
        else:
            try:
                reply = {"jsonrpc": "2.0", "id": ident, "result": self._on_request(method, message)}
            except Exception as exc:  # a handler bug must not kill the reader thread
                reply = {
                    "jsonrpc": "2.0",
                    "id": ident,
                    "error": {"code": -32603, "message": str(exc)},
                }
            with contextlib.suppress(RpcError):
                self._send(reply)


def _read_message(stream: Any) -> bytes | None:
    """One framed message body, or None at end of stream; a header line or a body over its
    bound ends the connection (``ValueError``) rather than being read."""
    length = -1
    while True:
        line = stream.readline(_MAX_HEADER_LINE + 1)
        if not line:
            return None
        if len(line) > _MAX_HEADER_LINE:
            raise ValueError("language server header line too long")
        line = line.strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
            if length > MAX_FRAME_BYTES:
                raise ValueError(f"language server message of {length} bytes")
    if length < 0:
        return b""
    body = stream.read(length)
    return body if len(body) == length else None
