"""One HTTP POST under one total deadline, its body read up to a cap.

httpx's timeouts bound each connect, write and read on its own, so a server that sends a byte
every 1.5 s never trips a 3 s read timeout (it held a search 67 s, issue 13). Here a watchdog
timer shuts the connection's socket down when the deadline passes, which ends whatever read
or write is blocked on it. The socket comes from httpx's ``trace`` request extension (the
``connection.connect_tcp.complete`` event carries the network stream). Name resolution
happens before there is a socket and cannot be interrupted, so the exchange runs in a daemon
thread the caller waits on no longer than the deadline: a slow resolver cannot hold a search
past it (the abandoned exchange ends when the resolver answers, its socket shut down at once
by the expired watchdog). The body is read in chunks and refused past ``max_bytes``, counted
after decompression.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class PostFailed(Exception):
    """The exchange failed; the message says why in a few words."""


class PostTimedOut(PostFailed):
    """The deadline passed before the whole answer arrived."""


def post_json(
    url: str,
    payload: dict[str, Any],
    headers: dict[str, str],
    *,
    deadline: float,
    connect_timeout: float,
    max_bytes: int,
) -> bytes:
    """POST ``payload`` as JSON; the body of a 200 answer, all of it before ``deadline``
    (``time.monotonic()``), or ``PostFailed``."""
    seconds = deadline - time.monotonic()
    if seconds <= 0:
        raise PostTimedOut
    watchdog = _Watchdog(seconds)
    late = PostTimedOut()
    try:
        body = before_deadline(
            lambda: _exchange(url, payload, headers, seconds, connect_timeout, max_bytes, watchdog),
            deadline,
            "cq-llm-post",
            late,
        )
    except BaseException as exc:
        if exc is not late:  # still resolving the name: the expired watchdog shuts it later
            watchdog.stop()
        raise
    watchdog.stop()
    return body


def before_deadline(call: Callable[[], T], deadline: float, name: str, late: Exception) -> T:
    """``call()`` on a daemon thread waited on until ``deadline`` (``time.monotonic()``): a
    call that cannot be interrupted (the system resolver) cannot hold the caller past it and
    is left to finish on its own. Raises ``late`` past the deadline, else what ``call`` raised."""
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as exc:  # handed to the waiting caller, never printed here
            outcome.append((False, exc))

    worker = threading.Thread(target=run, name=name, daemon=True)
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    if not outcome:
        raise late
    done, value = outcome[0]
    if not done:
        raise value
    return value


def _exchange(
    url: str,
    payload: dict[str, Any],
    headers: dict[str, str],
    seconds: float,
    connect_timeout: float,
    max_bytes: int,
    watchdog: _Watchdog,
) -> bytes:
    """The POST itself, on the worker thread."""
    import httpx

    timeout = httpx.Timeout(seconds, connect=min(connect_timeout, seconds))
    plain = url.startswith("http://")  # no TLS: skip loading the CA bundle
    try:
        with (
            httpx.Client(timeout=timeout, trust_env=False, verify=not plain) as client,
            client.stream(
                "POST", url, json=payload, headers=headers, extensions={"trace": watchdog.trace}
            ) as response,
        ):
            if response.status_code != 200:
                raise PostFailed(f"HTTP {response.status_code}")
            return _read_capped(response, max_bytes)
    except httpx.TimeoutException:
        raise PostTimedOut from None
    except httpx.HTTPError as exc:
        if watchdog.expired:
            raise PostTimedOut from None
        raise PostFailed(f"unreachable ({type(exc).__name__})") from None


def _read_capped(response: Any, max_bytes: int) -> bytes:
    too_long = PostFailed(f"answer longer than {max_bytes} bytes")
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise too_long
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise too_long
        chunks.append(chunk)
    return b"".join(chunks)


class _Watchdog:
    """Shuts the connection's socket down once ``seconds`` have passed."""

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._socket: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """httpx's ``trace`` extension: keep the socket of the new connection."""
        if event == "connection.connect_tcp.complete":
            with self._lock:
                self._socket = info["return_value"].get_extra_info("socket")
                if self.expired:
                    self._shutdown()

    def stop(self) -> None:
        self._timer.cancel()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            self._shutdown()

    def _shutdown(self) -> None:
        if self._socket is not None:
            with contextlib.suppress(OSError):  # already closed: the exchange had ended
                self._socket.shutdown(socket.SHUT_RDWR)
