"""``cq mcp`` in a fork of the test process, spoken to over its stdin and stdout pipes: a
transport for the SDK's ``Client`` in place of ``stdio_client``, without the interpreter start
and ``import mcp`` of each session (~2 CPU-s each of ~2.5, pydantic building the SDK's models).

The child is what ``python -m cq mcp`` is once started (``forked_cli``'s fork: its own pid,
environment, working directory, descriptors 0-2, default signal handlers): the server's own
code reads its stdin, writes its stdout and stderr (the errlog), starts its search processes
(real interpreters) and exits at the end of its input. The client's side frames JSON-RPC as
``stdio_client`` does. Tests of the process itself (its start and options, being killed, a
client that closes or never reads its pipes, agent install's registered command) keep
``stdio_client`` and a real ``python -m cq mcp``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
import sys
import traceback
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TextIO

import anyio
from forked_cli import PARENT_ENDS, _child, _warm
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.shared.message import SessionMessage
from mcp.types import jsonrpc_message_adapter

# A server that has not exited this long after the end of its input is killed (the test then
# fails on its errlog or its assertions, not by hanging).
EXIT_GRACE = 120.0


def _fork(params: StdioServerParameters, errlog: TextIO) -> tuple[int, int, int]:
    """The child's pid and the parent's ends of its stdin and stdout."""
    if params.command != sys.executable or params.args[:2] != ["-m", "cq"]:
        raise ValueError(f"not a cq server: {params.command} {params.args}")
    _warm()
    env = get_default_environment() | (params.env or {})
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err = errlog.fileno()
    errlog.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 1
        try:
            # the test process's objects are never collected here (their finalizers could
            # close descriptors this process opened since), nor walked by each collection
            gc.freeze()
            for theirs, mine in ((in_r, 0), (out_w, 1), (err, 2)):
                os.dup2(theirs, mine)
            for fd in (in_r, in_w, out_r, out_w, *PARENT_ENDS):
                with contextlib.suppress(OSError):
                    os.close(fd)
            cwd = None if params.cwd is None else str(params.cwd)
            code = _child(params.args[2:], cwd, env)  # type: ignore[arg-type]
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(in_r)
    os.close(out_w)
    PARENT_ENDS.update((in_w, out_r))
    return pid, in_w, out_r


async def _exited(pid: int, timeout: float) -> bool:
    """Whether ``pid`` exited (and was reaped) within ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    pidfd = os.pidfd_open(pid)
    gone = asyncio.Event()
    loop.add_reader(pidfd, gone.set)
    try:
        with anyio.move_on_after(timeout):
            await gone.wait()
    finally:
        loop.remove_reader(pidfd)
        os.close(pidfd)
    if not gone.is_set():
        return False
    os.waitpid(pid, 0)
    return True


@asynccontextmanager
async def forked_stdio_client(
    params: StdioServerParameters, errlog: TextIO
) -> AsyncIterator[tuple[Any, Any]]:
    """``stdio_client(params, errlog)`` with the server forked from this process."""
    pid, in_w, out_r = _fork(params, errlog)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 26)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(out_r, "rb", buffering=0)
    )
    write_transport, write_protocol = await loop.connect_write_pipe(
        lambda: asyncio.streams.FlowControlMixin(), os.fdopen(in_w, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
    to_session, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_server, from_session = anyio.create_memory_object_stream[SessionMessage](0)

    async def read() -> None:
        listening = True  # once the session is gone, the server's output is read and dropped
        async with to_session:
            while line := await reader.readline():
                if not listening:
                    continue
                try:
                    message: SessionMessage | Exception = SessionMessage(
                        jsonrpc_message_adapter.validate_json(line, by_name=False)
                    )
                except ValueError as exc:
                    message = exc
                try:
                    await to_session.send(message)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    listening = False

    async def write() -> None:
        async with from_session:
            async for item in from_session:
                data = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                try:
                    writer.write(data.encode("utf-8"))
                    await writer.drain()
                except (BrokenPipeError, ConnectionResetError):
                    return

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read)
            tg.start_soon(write)
            try:
                yield from_server, to_server
            finally:
                with anyio.CancelScope(shield=True):
                    await to_server.aclose()
                    write_transport.close()  # the end of the server's input: it exits
                    if not await _exited(pid, EXIT_GRACE):
                        with contextlib.suppress(OSError):
                            os.kill(pid, signal.SIGKILL)
                        await _exited(pid, EXIT_GRACE)
                    read_transport.close()
                tg.cancel_scope.cancel()
    finally:
        PARENT_ENDS.difference_update((in_w, out_r))
