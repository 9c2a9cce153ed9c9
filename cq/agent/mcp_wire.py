"""The MCP server's stdio transport: one JSON-RPC message per line, every bad line answered.

The SDK's own stdio transport hands a line it cannot parse to the session as an exception,
which logs it and answers nothing, so a client that sent ``{not json``, ``null`` or a batch,
or a request with a lone surrogate in a string (valid JSON to Python, invalid Unicode to the
SDK's parser), waits forever. Here every line the SDK cannot take gets a JSON-RPC error:
parse error (-32700) for text that is not JSON, invalid request (-32600) for JSON that is not
one message object (batches included: MCP sends one message per line), invalid params
(-32602) for a string that is not valid Unicode in ``params`` or a number too long for
Python to read, with the request's id when one can be read and null otherwise. Error
responses share the writer with the server's own replies, so lines never interleave. fds 0
and 1 are claimed as the SDK claims them (a child process or a stray print cannot write
into the wire).

A client may stop reading while it still writes: its pipe fills and a write blocks for good.
So the wire's reads and writes run on daemon threads of their own (anyio's worker threads
keep a process alive until they return), a write goes straight to the descriptor (no
buffer lock left held at exit), and at the end of input the session ends and the transport
stops at once, abandoning a blocked write: the server exits, its searches with it. A client
that closes the pipe it reads from ends the server the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, BinaryIO, NamedTuple, TypeVar

import anyio
import pydantic
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    jsonrpc_message_adapter,
)

from cq.agent.worker_protocol import claim_stdio

# Not tuned: a bound on memory. A search call is its query plus a few small arguments, far
# below this; a longer line is refused whole.
MAX_LINE_BYTES = 16 * 1024 * 1024

# Not tuned: how long the last replies may take to go out once the input ended; a client that
# reads takes microseconds, one that stopped reading never would.
DRAIN_SECONDS = 1.0

_TOO_LONG = object()
_T = TypeVar("_T")


class _Reply(NamedTuple):
    """The transport's own answer to a line the session never sees."""

    message: SessionMessage


@asynccontextmanager
async def stdio_streams() -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[Any]]
]:
    """The read and write streams of a server session over this process's stdin/stdout."""
    wire_in, wire_out = claim_stdio()
    incoming_send, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outgoing, outgoing_recv = anyio.create_memory_object_stream[SessionMessage](0)
    answers = outgoing.clone()  # the reader's own replies to bad lines
    written = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_read, wire_in, incoming_send, answers)
        tg.start_soon(_write, wire_out.fileno(), outgoing_recv, written, tg.cancel_scope)
        yield incoming, outgoing
        # The session is over: the replies it gave go out if the client reads them; a write
        # the client leaves blocked is abandoned.
        with anyio.move_on_after(DRAIN_SECONDS):
            await written.wait()
        tg.cancel_scope.cancel()


async def _read(
    wire_in: BinaryIO,
    incoming: MemoryObjectSendStream[SessionMessage | Exception],
    answers: MemoryObjectSendStream[SessionMessage],
) -> None:
    async with incoming, answers:
        while True:
            line = await _on_daemon_thread(_read_line, wire_in)
            if line is None:
                return  # end of input: the session ends, in-flight calls are cancelled
            item = (
                _error(None, INVALID_REQUEST, f"message over {MAX_LINE_BYTES} bytes")
                if line is _TOO_LONG
                else _decode_line(line)  # type: ignore[arg-type]
            )
            if isinstance(item, _Reply):
                await answers.send(item.message)
            elif item is not None:
                await incoming.send(item)


async def _write(
    fd: int,
    outgoing: MemoryObjectReceiveStream[SessionMessage],
    written: anyio.Event,
    session: anyio.CancelScope,
) -> None:
    async with outgoing:
        async for item in outgoing:
            line = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
            try:
                await _on_daemon_thread(_write_line, fd, line.encode("utf-8"))
            except BrokenPipeError:  # the client closed its end: nobody reads a reply
                session.cancel()  # so the server ends, as at the end of its input
                return
    written.set()


async def _on_daemon_thread(call: Callable[..., _T], *args: Any) -> _T:
    """``call(*args)`` on a daemon thread of its own; a cancelled wait abandons it (a read or
    write that never returns cannot keep the process alive)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[_T] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if not done.done():
            if error is not None:
                done.set_exception(error)
            else:
                done.set_result(result)

    def run() -> None:
        try:
            result, error = call(*args), None
        except BaseException as exc:  # handed to the waiting task
            result, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop is gone: the server is exiting
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, daemon=True, name="cq-mcp-wire").start()
    return await done


def _read_line(wire_in: BinaryIO) -> bytes | object | None:
    line = wire_in.readline(MAX_LINE_BYTES + 1)
    if not line:
        return None
    if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
        while (rest := wire_in.readline(1 << 20)) and not rest.endswith(b"\n"):
            pass  # skip to the end of the line
        return _TOO_LONG
    return line


def _write_line(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _decode_line(raw: bytes) -> SessionMessage | _Reply | None:
    """A message for the session, an error reply for the client, or None for a blank line or
    a malformed message that expects no reply (a response of the client's)."""
    text = raw.decode("utf-8", errors="replace").strip()  # undecodable bytes: as the SDK does
    if not text:
        return None
    with contextlib.suppress(pydantic.ValidationError):
        message = jsonrpc_message_adapter.validate_json(text, by_name=False)
        if isinstance(message, JSONRPCNotification) and _has_id(text):
            return _error(None, INVALID_REQUEST, "invalid request: an id is a string or integer")
        return SessionMessage(message)
    huge = []

    def whole(digits: str) -> int:  # Python refuses to convert a number this long
        if len(digits) > sys.get_int_max_str_digits():
            huge.append(digits)
            return 0
        return int(digits)

    try:
        value = json.loads(text, parse_int=whole)
    except (ValueError, RecursionError):
        return _error(None, PARSE_ERROR, "parse error: the line is not JSON")
    if isinstance(value, list):
        return _error(None, INVALID_REQUEST, "invalid request: batches are not supported")
    if not isinstance(value, dict):
        return _error(None, INVALID_REQUEST, "invalid request: a message is a JSON object")
    rid = value.get("id")
    if isinstance(rid, bool) or not isinstance(rid, str | int):
        rid = None
    if "method" not in value and ("result" in value or "error" in value):
        return None  # a malformed response: JSON-RPC never answers a response
    if huge:
        limit = sys.get_int_max_str_digits()
        return _error(rid, INVALID_PARAMS, f"invalid params: a number of over {limit} digits")
    if not _is_unicode(value.get("params")):
        return _error(rid, INVALID_PARAMS, "invalid params: a string is not valid Unicode")
    if not _is_unicode(value):
        return _error(rid, INVALID_REQUEST, "invalid request: a string is not valid Unicode")
    return _error(rid, INVALID_REQUEST, "invalid request: not a JSON-RPC 2.0 message")


def _has_id(text: str) -> bool:
    """Whether a message the SDK read as a notification has an ``id`` member: a request whose
    id is null, fractional, boolean or an object, which the SDK reads as a notification and
    which would never be answered."""
    if '"id"' not in text and "\\u" not in text:  # the usual notification: no second parse
        return False
    with contextlib.suppress(ValueError, RecursionError):
        value = json.loads(text)
        return isinstance(value, dict) and "id" in value
    return False


def _is_unicode(value: object) -> bool:
    """False when a string in ``value`` holds a lone surrogate (JSON's ``\\ud800``)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _error(rid: str | int | None, code: int, message: str) -> _Reply:
    error = ErrorData(code=code, message=message)
    return _Reply(SessionMessage(JSONRPCError(jsonrpc="2.0", id=rid, error=error)))
