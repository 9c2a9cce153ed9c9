"""Frames on the server's Unix sockets: a 4-byte big-endian length, then one JSON object.

Every message is an object with a ``kind``; ``cq.server.messages`` types the ones the server
and its search processes read. File descriptors (a client's stdin, stdout, stderr, and the
client's connection handed on to a search process) ride with a frame as ``SCM_RIGHTS``. JSON
from the standard library because the client imports this module on every search: its
start-up is the latency the server exists to remove. Lone surrogates (environment values and
arguments that are not UTF-8, as Python decodes them) survive the round trip as JSON escapes.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct

MAX_FRAME = 1 << 24  # an environment plus arguments; a bigger frame is a broken peer
MAX_FDS = 4
_LENGTH = struct.Struct(">I")


class WireError(Exception):
    """The peer sent something that is not a frame."""


class LostDescriptors(WireError):
    """The kernel dropped descriptors sent with a frame (``MSG_CTRUNC``: this process had no
    free descriptor numbers, or the peer sent more than ``MAX_FDS``). The frame was read whole
    and the descriptors that did come are closed: the message cannot be acted on."""


def encode(message: dict[str, object]) -> bytes:
    body = json.dumps(message, separators=(",", ":")).encode("ascii")
    return _LENGTH.pack(len(body)) + body


class Channel:
    """One end of a connection: whole frames out, whole frames (and their fds) in."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buffer = b""
        self._fds: list[int] = []
        self._lost = False  # the frame being read came with MSG_CTRUNC

    def send(self, message: dict[str, object], fds: tuple[int, ...] | list[int] = ()) -> None:
        data = encode(message)
        if fds:
            sent = socket.send_fds(self.sock, [data], list(fds))
            if sent < len(data):
                self.sock.sendall(data[sent:])
        else:
            self.sock.sendall(data)

    def recv(self) -> tuple[dict[str, object] | None, list[int]]:
        """The next message and the fds that came with it; ``(None, [])`` at end of input.

        When the frame is broken or its descriptors were dropped, the fds received and not
        yet returned are closed before the error leaves: a client's pipes are never held by a
        frame nobody will act on. A timeout keeps them for the next call (the frame may
        still come whole); who gives up on the channel then calls ``close``."""
        try:
            return self._recv()
        except TimeoutError:
            raise
        except BaseException:
            self.discard()
            raise

    def _recv(self) -> tuple[dict[str, object] | None, list[int]]:
        while True:
            if len(self._buffer) >= _LENGTH.size:
                (size,) = _LENGTH.unpack_from(self._buffer)
                if size > MAX_FRAME:
                    raise WireError(f"frame of {size} bytes")
                end = _LENGTH.size + size
                if len(self._buffer) >= end:
                    body, self._buffer = self._buffer[_LENGTH.size : end], self._buffer[end:]
                    fds, self._fds = self._fds, []
                    message = _decode(body)
                    if self._lost:
                        self._lost = False
                        for fd in fds:
                            _close(fd)
                        raise LostDescriptors(f"a {message['kind']} frame lost its descriptors")
                    return message, fds
            data, fds, flags, _addr = socket.recv_fds(self.sock, 65536, MAX_FDS)
            self._fds += fds
            self._lost = self._lost or bool(flags & socket.MSG_CTRUNC)
            if not data:
                self.discard()  # fds that came without a whole frame are nobody's
                return None, []
            self._buffer += data

    def close(self) -> None:
        """Close the connection and every fd received with it and not returned."""
        self.discard()
        self.sock.close()

    def discard(self) -> None:
        """Close the fds received with a frame not yet returned."""
        fds, self._fds = self._fds, []
        for fd in fds:
            _close(fd)


def _decode(body: bytes) -> dict[str, object]:
    try:
        message = json.loads(body)
    except ValueError as exc:
        raise WireError(f"not JSON: {exc}") from None
    if not isinstance(message, dict) or not isinstance(message.get("kind"), str):
        raise WireError("a frame without a kind")
    return message


def _close(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)
