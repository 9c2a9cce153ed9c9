"""``cq mcp`` under a hostile or careless client: malformed lines, lone surrogates, a search
that runs long (a model server on loopback that never answers, a megabyte query), cancellation
and the end of input while a search runs.

Malformed lines are written raw to a real ``cq mcp`` (no SDK client can send them), forked
from the test process as ``forked_mcp`` forks it (a subprocess where the process itself is
under test: killed outright); everything else goes through the real SDK client.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import write_tree
from forked_cli import PARENT_ENDS
from forked_mcp import _fork
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from test_mcp_server import FIXTURE, session, text_of

from cq.agent.mcp_wire import MAX_LINE_BYTES

pytestmark = pytest.mark.filterwarnings("ignore:ping is removed")  # legacy mode: still served

QUESTION = "how are edges inserted into the store?"
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "repo", FIXTURE)


class StalledModel:
    """An LLM endpoint that takes a request and holds it: answers only when released, and
    notices when the caller hangs up."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.hung_up = threading.Event()
        self.release = threading.Event()


@pytest.fixture
def stalled(monkeypatch: pytest.MonkeyPatch) -> Iterator[StalledModel]:
    model = StalledModel()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            model.asked.set()
            give_up = time.monotonic() + 300
            while not model.release.is_set() and time.monotonic() < give_up:
                readable, _, _ = select.select([self.connection], [], [], 0.1)
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    model.hung_up.set()  # the caller closed the connection
                    return
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("CQ_LLM_URL", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv("CQ_LLM_TIMEOUT", "120")  # the longest cq accepts: it would wait 120 s
    yield model
    model.release.set()
    server.shutdown()
    server.server_close()


class _Forked:
    """What ``RawServer`` uses of a ``Popen``, for ``cq mcp`` forked from this process
    (``forked_mcp``): its real stdin and stdout pipes, its stderr in a file."""

    def __init__(self, root: Path) -> None:
        self.errlog = tempfile.TemporaryFile("w+")  # noqa: SIM115 (read and closed by communicate)
        argv = ["-m", "cq", "mcp", "--root", str(root)]
        params = StdioServerParameters(command=sys.executable, args=argv, env=dict(os.environ))
        self.pid, in_w, out_r = _fork(params, self.errlog)
        self.ends = (in_w, out_r)
        self.stdin = os.fdopen(in_w, "wb")
        self.stdout = os.fdopen(out_r, "rb")
        self.returncode: int | None = None

    def communicate(self, timeout: float) -> tuple[bytes, bytes]:
        """The end of its input, then the rest of its output and its stderr once it exited."""
        self.stdin.close()
        deadline = time.monotonic() + timeout
        rest = []
        while chunk := self._read(deadline):  # to the end: every holder of it has exited
            rest.append(chunk)
        self.stdout.close()
        PARENT_ENDS.difference_update(self.ends)
        pidfd = os.pidfd_open(self.pid)
        try:
            if not select.select([pidfd], [], [], max(0.0, deadline - time.monotonic()))[0]:
                os.kill(self.pid, signal.SIGKILL)
        finally:
            os.close(pidfd)
        _, status = os.waitpid(self.pid, 0)
        self.returncode = os.waitstatus_to_exitcode(status)
        with self.errlog:
            self.errlog.seek(0)
            return b"".join(rest), self.errlog.read().encode()

    def _read(self, deadline: float) -> bytes:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([self.stdout], [], [], left)[0]:
            os.kill(self.pid, signal.SIGKILL)
            raise TimeoutError(f"cq mcp {self.pid}: its output still open")
        return os.read(self.stdout.fileno(), 1 << 16)


class RawServer:
    """``cq mcp`` spoken to line by line: forked (``_Forked``), or a ``python -m cq mcp``
    subprocess for a test of the process itself (killed outright)."""

    def __init__(self, root: Path, process: bool = False) -> None:
        self.proc: subprocess.Popen[bytes] | _Forked = (
            subprocess.Popen(
                [sys.executable, "-m", "cq", "mcp", "--root", str(root)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            if process
            else _Forked(root)
        )
        self.send(INIT)
        assert self.reply()["id"] == 0
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: Any) -> None:
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def reply(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "the server closed its output"
        return json.loads(line)


def test_every_malformed_line_or_id_gets_a_json_rpc_error_and_the_server_serves_on(
    repo: Path,
) -> None:
    server = RawServer(repo)
    surrogate = (
        b'{"jsonrpc": "2.0", "id": 41, "method": "tools/call", '
        b'"params": {"name": "search", "arguments": {"query": "\\ud800"}}}'
    )
    cases: list[tuple[bytes | dict[str, Any], Any, int | None]] = [
        (b"{not json", None, -32700),
        (b"[]", None, -32600),
        (b"null", None, -32600),
        (b"42", None, -32600),
        (b'"ping"', None, -32600),
        (json.dumps([{"jsonrpc": "2.0", "id": 40, "method": "ping"}]).encode(), None, -32600),
        (b'{"jsonrpc": "2.0", "id": 42}', 42, -32600),
        (b'{"jsonrpc": "2.0", "id": 43, "method": 7}', 43, -32600),
        (b"[" * 100_000, None, -32700),  # nesting deeper than any parser's recursion
        (surrogate, 41, -32602),
        (b"   ", None, None),  # a blank line: nothing to answer
        # Responses (to nothing the server asked) are never answered, well-formed or not.
        (b'{"jsonrpc": "2.0", "id": 77, "error": {"code": -1, "message": "no"}}', None, None),
        (b'{"jsonrpc": "2.0", "id": 78, "result": 5}', None, None),
        (b"x" * (MAX_LINE_BYTES + 10), None, -32600),
    ]
    for n, (line, rid, code) in enumerate(cases):
        server.send(line)
        server.send({"jsonrpc": "2.0", "id": 1000 + n, "method": "ping"})
        if code is not None:
            error = server.reply()
            assert error["id"] == rid and error["error"]["code"] == code, (line[:60], error)
        assert server.reply() == {"jsonrpc": "2.0", "id": 1000 + n, "result": {}}
    call = {"name": "search", "arguments": {"query": "insert_edge", "limit": 3}}
    server.send({"jsonrpc": "2.0", "id": 50, "method": "tools/call", "params": call})
    answer = server.reply()
    assert answer["id"] == 50 and "pkg/store.py:2:" in answer["result"]["content"][0]["text"]
    # The same server (one start serves both cases) for requests with ids of other types.
    _a_request_whose_id_is_not_a_string_or_integer_is_answered(server)
    _, stderr = server.proc.communicate(timeout=300)
    assert server.proc.returncode == 0 and b"Traceback" not in stderr


def _a_request_whose_id_is_not_a_string_or_integer_is_answered(server: RawServer) -> None:
    """MCP ids are strings or integers, never null. A request with a null, fractional, boolean
    or object id used to pass as a notification: the client waited forever for its answer."""
    for n, rid in enumerate([None, 1.5, True, {}, []]):
        server.send({"jsonrpc": "2.0", "id": rid, "method": "tools/list"})
        server.send({"jsonrpc": "2.0", "id": 2000 + n, "method": "ping"})
        error = server.reply()
        assert error["id"] is None and error["error"]["code"] == -32600, (rid, error)
        assert "id" in error["error"]["message"]
        assert server.reply() == {"jsonrpc": "2.0", "id": 2000 + n, "result": {}}
    # A notification (no id at all) is still taken, and never answered.
    server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}})
    server.send({"jsonrpc": "2.0", "id": 3000, "method": "ping"})
    assert server.reply() == {"jsonrpc": "2.0", "id": 3000, "result": {}}


def test_the_server_answers_while_a_search_waits_on_a_stalled_model(
    repo: Path, tmp_path: Path, stalled: StalledModel
) -> None:
    """One search hangs on the model; pings, listings and another search are answered
    meanwhile; cancelled, the hung search is stopped (its model connection closed)."""

    async def scenario() -> None:
        with (tmp_path / "err").open("w") as errlog:
            async with session(repo, errlog) as client:
                async with anyio.create_task_group() as tg:
                    hung = anyio.CancelScope()

                    async def ask_the_model() -> None:
                        with hung:
                            await client.call_tool("search", {"query": QUESTION, "rewrite": True})

                    tg.start_soon(ask_the_model)
                    assert await anyio.to_thread.run_sync(stalled.asked.wait, 120)
                    with anyio.fail_after(120):
                        await client.send_ping()
                        tools = (await client.list_tools()).tools
                        other = await client.call_tool("search", {"query": "insert_edge"})
                    assert [t.name for t in tools] == ["search", "stats"]
                    assert not other.is_error and "pkg/store.py:2:" in text_of(other)
                    assert not stalled.hung_up.is_set()  # the first search is still waiting
                    hung.cancel()  # the client gives up: notifications/cancelled
                assert await anyio.to_thread.run_sync(stalled.hung_up.wait, 60)
                assert not stalled.release.is_set()  # stopped, not answered
                stats = json.loads(text_of(await client.call_tool("stats", {})))["server"]
                assert stats["cancelled"] == 1 and stats["stopped_early"] == 1
                assert stats["killed"] == 1  # a network read has no checkpoint: killed
                again = await client.call_tool("search", {"query": "Store", "limit": 3})
                assert not again.is_error and "pkg/store.py:1:" in text_of(again)

    anyio.run(scenario)
    assert "Traceback" not in (tmp_path / "err").read_text(), (tmp_path / "err").read_text()[-3000:]


def test_end_of_input_while_a_search_runs_ends_the_server_and_its_searches(
    repo: Path, stalled: StalledModel
) -> None:
    server = RawServer(repo)
    call = {"name": "search", "arguments": {"query": QUESTION, "rewrite": True}}
    server.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call})
    assert stalled.asked.wait(120)
    # communicate() returns once every process holding the server's stdout and stderr (the
    # server, its search processes, their classifier workers) has exited; the search itself
    # would wait on the model for 120 s.
    _, stderr = server.proc.communicate(timeout=300)
    assert server.proc.returncode == 0 and b"Traceback" not in stderr
    assert stalled.hung_up.wait(300) and not stalled.release.is_set()


def test_a_megabyte_query_does_not_freeze_the_server(repo: Path, tmp_path: Path) -> None:
    """A query whose text is costly to analyse (a megabyte of path separators) must not stop
    the server answering other calls, nor its cancellation."""
    huge = "a/" * 500_000

    async def scenario() -> None:
        with (tmp_path / "err").open("w") as errlog:
            async with session(repo, errlog) as client:
                async with anyio.create_task_group() as tg:
                    big = anyio.CancelScope()

                    async def ask() -> None:
                        with big:
                            await client.call_tool("search", {"query": huge})

                    tg.start_soon(ask)
                    await anyio.sleep(1)  # the call is under way
                    with anyio.fail_after(120):
                        await client.send_ping()
                        assert len((await client.list_tools()).tools) == 2
                        other = await client.call_tool("search", {"query": "insert_edge"})
                    assert not other.is_error and "pkg/store.py:2:" in text_of(other)
                    big.cancel()
                with anyio.fail_after(120):
                    after = await client.call_tool("search", {"query": "Store", "limit": 3})
                assert not after.is_error and "pkg/store.py:1:" in text_of(after)

    anyio.run(scenario)
    assert "Traceback" not in (tmp_path / "err").read_text(), (tmp_path / "err").read_text()[-3000:]


def test_search_processes_end_when_the_server_is_killed(repo: Path, stalled: StalledModel) -> None:
    """A server killed outright (no clean-up runs) leaves no search process behind."""
    server = RawServer(repo, process=True)
    call = {"name": "search", "arguments": {"query": QUESTION, "rewrite": True}}
    server.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call})
    assert stalled.asked.wait(120)
    server.proc.kill()
    server.proc.communicate(timeout=300)  # every holder of its stderr has exited
    assert stalled.hung_up.wait(300) and not stalled.release.is_set()


def test_search_processes_never_import_code_from_the_searched_tree(tmp_path: Path) -> None:
    """The server runs in the repository (its current directory); a ``cq`` package there must
    not replace cq's own in the search processes it starts."""
    marker = tmp_path / "ran"
    planted = f"open({str(marker)!r}, 'w').close()\n"
    repo = write_tree(
        tmp_path / "repo",
        {
            **FIXTURE,
            "cq/__init__.py": planted,
            "cq/agent/__init__.py": planted,
            "cq/agent/search_worker.py": planted,
        },
    )
    params = StdioServerParameters(
        command=sys.executable,
        args=["-P", "-m", "cq", "mcp"],  # -P: this server itself imports the installed cq
        env={k: v for k, v in os.environ.items() if k.startswith(("CQ_", "PATH", "HOME"))},
        cwd=repo,
    )

    async def scenario() -> None:
        with (tmp_path / "err").open("w") as errlog:
            transport = stdio_client(params, errlog=errlog)
            async with Client(transport, mode="legacy", read_timeout_seconds=120) as client:
                found = await client.call_tool("search", {"query": "insert_edge", "limit": 3})
                assert not found.is_error and "pkg/store.py:2:" in text_of(found)

    anyio.run(scenario)
    assert not marker.exists()
