"""A real HTTP server on loopback that plays an LLM endpoint and records every request.

It answers Ollama's ``/api/chat`` with a chosen message content, or misbehaves on purpose:
trickles its answer a byte at a time, sends a body larger than any answer, or nests JSON
deeper than any answer. Each request is recorded with its headers, so a test can see whether
a key was sent, and ``hung_up`` is set when the client closed the connection before the
server finished writing.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import msgspec

GOOD = {"identifiers": ["insert_edge", "GraphStore"], "literals": [], "focus": "implementation"}


class Recorded(msgspec.Struct, frozen=True):
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class ModelServer:
    """``behaviour``: "answer", "trickle-body", "trickle-headers", "huge", "huge-chunked",
    "deep-body". ``content`` is the model's message content for "answer" and the trickles."""

    def __init__(self, behaviour: str = "answer", content: str | None = None) -> None:
        self.behaviour = behaviour
        self.content = content if content is not None else json.dumps(GOOD)
        self.requests: list[Recorded] = []
        self.hung_up = threading.Event()
        self.trickle_seconds = 0.3
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> ModelServer:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def reply_body(self, model: str) -> bytes:
        message = {"role": "assistant", "content": self.content}
        return json.dumps({"model": model, "message": message, "done": True}).encode()


def _handler(server: ModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            headers = {k.lower(): v for k, v in self.headers.items()}
            server.requests.append(Recorded(path=self.path, headers=headers, body=body))
            try:
                self._respond(server.reply_body(body.get("model", "")))
            except (BrokenPipeError, ConnectionResetError):
                server.hung_up.set()

        def _respond(self, payload: bytes) -> None:
            behaviour = server.behaviour
            if behaviour == "huge":
                payload = payload[:-1] + b', "pad": "' + b"x" * (3 << 20) + b'"}'
            if behaviour == "deep-body":
                payload = payload[:-1] + b', "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
            head = (
                f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
            ).encode()
            if behaviour == "huge-chunked":
                self._chunked(payload[:-1] + b', "pad": "' + b"x" * (3 << 20) + b'"}')
            elif behaviour == "trickle-headers":
                self._trickle(head + payload)
            elif behaviour == "trickle-body":
                self.wfile.write(head)
                self.wfile.flush()
                self._trickle(payload)
            else:
                self.wfile.write(head + payload)

        def _trickle(self, data: bytes) -> None:
            for i in range(len(data)):
                self.wfile.write(data[i : i + 1])
                self.wfile.flush()
                time.sleep(server.trickle_seconds)

        def _chunked(self, data: bytes) -> None:
            self.wfile.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            )
            for i in range(0, len(data), 1 << 16):
                chunk = data[i : i + (1 << 16)]
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(b"0\r\n\r\n")

    return Handler
