"""``cq mcp``'s input, as a careless or hostile client sends it, through the real SDK client:
numbers out of any range, unknown and mistyped arguments, a query ``-``; what a result carries
(structured content under the tool's output schema); and a client that stops reading.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import termios
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import anyio
import msgspec
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from conftest import run_cq, write_tree
from forked_mcp import forked_stdio_client
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from test_mcp_protocol import INIT
from test_mcp_server import FIXTURE, session, text_of, without_run

from cq.model import SearchResult

# run_cq: the CLI's report compared with the server's, forked (forked_cli.py)
pytestmark = [pytest.mark.filterwarnings("ignore:ping is removed"), pytest.mark.cli_forked]
T = TypeVar("T")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "repo", FIXTURE)


class Served:
    """One ``cq mcp`` on a read-only copy of ``FIXTURE``, kept for the module's argument
    tests: each sends its calls over the same session (a server's start, forked as
    ``forked_mcp`` does, still starts its search process; these tests ask nothing of it)."""

    def __init__(self, portal: BlockingPortal, client: Client, repo: Path, errlog: Path) -> None:
        self.portal, self.client, self.repo, self.errlog = portal, client, repo, errlog

    def run(self, scenario: Callable[[Client], Awaitable[T]]) -> T:
        """Run ``scenario`` with the client; the server's stderr holds no traceback after."""
        result = self.portal.call(scenario, self.client)
        assert "Traceback" not in self.errlog.read_text()
        return result


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("served")
    repo = write_tree(base / "repo", FIXTURE)
    # What conftest's autouse fixture gives each test, fixed for the module's server (it
    # starts before any test's own environment is set).
    env = {k: v for k, v in os.environ.items() if k.startswith(("PATH", "HOME"))}
    env |= {"CQ_CACHE_DIR": str(base / "cache"), "XDG_CONFIG_HOME": str(base / "config")}
    env |= {"CQ_LLM_URL": "http://127.0.0.1:9/", "CQ_SEMANTIC": "0", "CQ_SERVER": "0"}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "cq", "mcp", "--root", str(repo)], env=env
    )
    errlog = base / "err"
    with errlog.open("w") as log, start_blocking_portal() as portal:
        transport = forked_stdio_client(params, errlog=log)
        client = Client(transport, mode="legacy", read_timeout_seconds=120)
        with portal.wrap_async_context_manager(client) as entered:
            yield Served(portal, entered, repo, errlog)


def test_numbers_beyond_their_range_are_refused_and_the_server_serves_on(served: Served) -> None:
    """Two integers over 2**64 used to wedge every later search; each is now an error
    naming the argument and its range, and the next search is answered."""
    calls: list[tuple[dict[str, Any], str]] = [
        ({"limit": 2**64 + 1}, "`limit`: must be a whole number from 0 to 2147483647"),
        ({"max_tokens": 2**65}, "`max_tokens`: must be a whole number from 1 to 2147483647"),
        ({"limit": 10**1000}, "`limit`: must be a whole number from 0 to 2147483647"),
        ({"limit": -1}, "from 0 to 2147483647, got -1"),
        ({"max_tokens": 0}, "from 1 to 2147483647, got 0"),
        ({"limit": 2.5}, "`limit`: must be a whole number"),
        ({"limit": "x"}, '`limit`: must be a whole number from 0 to 2147483647, got "x"'),
        ({"limit": True}, "`limit`: must be a whole number"),
    ]

    async def scenario(client: Client) -> None:
        refused = []
        for extra, _ in calls:
            with anyio.fail_after(60):
                arguments = {"query": "insert_edge", **extra}
                refused.append(await client.call_tool("search", arguments))
        # The server serves on (two numbers over 2**64 used to leave both search
        # processes taken for good: this call never came back).
        with anyio.fail_after(120):
            after = await client.call_tool("search", {"query": "insert_edge", "limit": 3})
        assert not after.is_error and "pkg/store.py:2:" in text_of(after)
        for result, (_, expected) in zip(refused, calls, strict=True):
            assert result.is_error and expected in text_of(result), text_of(result)
        # Too long for Python to read at all: refused as invalid params.
        with anyio.fail_after(60), pytest.raises(MCPError, match="over 4300 digits"):
            await client.call_tool("search", {"query": "x", "limit": 10**5000})
        # Whole numbers as JSON clients send them still work: a numeral, 2.0.
        for limit in ("2", 2.0):
            ok = await client.call_tool("search", {"query": "Store", "limit": limit})
            assert not ok.is_error

    served.run(scenario)


def test_unknown_arguments_are_errors_naming_the_valid_ones(served: Served) -> None:
    async def scenario(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        schema = tools["search"].input_schema
        assert schema["additionalProperties"] is False
        valid = list(schema["properties"])
        typo = await client.call_tool("search", {"query": "insert_edge", "limt": 3})
        assert typo.is_error
        message = text_of(typo)
        assert "unknown argument `limt`" in message
        assert "did you mean `limit`?" in message
        assert ", ".join(valid) in message
        other = await client.call_tool("search", {"query": "x", "budget": 5})
        assert other.is_error and "unknown argument `budget`" in text_of(other)
        assert "did you mean" not in text_of(other)
        stats = await client.call_tool("stats", {"verbose": True})
        assert stats.is_error and "verbose" in text_of(stats)

    served.run(scenario)


def test_argument_errors_name_the_argument_and_carry_no_library_urls(served: Served) -> None:
    bad: list[tuple[dict[str, Any], str]] = [
        ({"query": 7}, "`query`"),
        ({"query": "x", "include": 5}, "`include`"),
        ({"query": "x", "format": "xml"}, "`format`"),
        ({"query": "x", "mode": "fuzzy"}, "`mode`"),
        ({"query": "x", "explain": "maybe"}, "`explain`"),
        ({"query": ""}, "`query`"),
        ({"limit": 3}, "missing argument `query`"),
    ]

    async def scenario(client: Client) -> None:
        for arguments, named in bad:
            result = await client.call_tool("search", arguments)
            assert result.is_error and named in text_of(result), text_of(result)
            assert "http" not in text_of(result) and "pydantic" not in text_of(result)
            assert text_of(result).count("\n") == 0  # one line
        # A value outside a choice lists the choices (an agent that took `focus` for
        # a path, or guessed a language, can correct itself from the error alone).
        choices = [
            ({"focus": "pkg/use.py"}, "`focus`", "implementation, tests, all"),
            ({"lang": "cobol"}, "`lang`", "auto, python, rust"),
            ({"format": "xml"}, "`format`", "md, json"),
            ({"mode": "fuzzy"}, "`mode`", "identifier, literal, regex"),
        ]
        for extra, named, values in choices:
            result = await client.call_tool("search", {"query": "x", **extra})
            message = text_of(result)
            assert result.is_error and named in message and values in message, message
        # A list given as its JSON text, as some clients send it, is a list.
        listed = await client.call_tool(
            "search", {"query": "insert_edge", "include": '["pkg/store.py"]'}
        )
        assert not listed.is_error and "pkg/use.py" not in text_of(listed)

    served.run(scenario)


def test_an_empty_exclude_glob_or_in_dir_is_refused(served: Served) -> None:
    """``exclude: [""]`` left every file out and the report said nothing held the query;
    ``in_dir: ""`` searched the whole root: an agent's unfilled value, refused as the CLI's
    ``--exclude ""`` and ``--in ""`` are."""

    async def scenario(client: Client) -> None:
        for arguments, named in [
            ({"query": "insert_edge", "exclude": ["*.md", ""]}, "`exclude`"),
            ({"query": "insert_edge", "in_dir": ""}, "`in_dir`"),
        ]:
            result = await client.call_tool("search", arguments)
            assert result.is_error and named in text_of(result), text_of(result)
            assert text_of(result).count("\n") == 0  # one line

    served.run(scenario)


def test_null_for_an_optional_argument_means_its_default(served: Served) -> None:
    """Clients that send every argument (null for those they leave unset, as strict function
    calling does) were refused for `lang`, `limit`, `include`, the flags...: null now means
    the argument's default, for every argument but the required query."""

    async def scenario(client: Client) -> None:
        schema = (await client.list_tools()).tools[0].input_schema
        nulls = {name: None for name in schema["properties"] if name != "query"}
        args = {"query": "insert_edge", "format": "json"}
        filled = await client.call_tool("search", {**nulls, **args})
        plain = await client.call_tool("search", args)
        assert not filled.is_error, text_of(filled)
        report = without_run(filled.content[0].text)
        assert report == without_run(plain.content[0].text)
        missing = await client.call_tool("search", {**nulls, "query": None})
        assert missing.is_error and "`query`" in text_of(missing)

    served.run(scenario)


def test_results_are_structured_content_under_the_output_schema(served: Served) -> None:
    """The SDK client validates every result against the tool's output schema (it raises
    otherwise): a JSON report is ``cq schema``'s ``SearchResult``, a markdown one its text
    and its Answer as data (the JSON report's ``answer`` less its indexes into findings)."""

    async def scenario(client: Client) -> tuple[dict[str, Any], Any, Any]:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        js = await client.call_tool(
            "search", {"query": "insert_edge", "format": "json", "limit": 5}
        )
        md = await client.call_tool("search", {"query": "insert_edge", "limit": 5})
        return tools["search"].output_schema, js, md

    schema, js, md = served.run(scenario)
    assert schema is not None and schema["type"] == "object"
    cq_schema = json.loads(run_cq("schema").stdout)
    assert schema["$defs"]["SearchResult"] == cq_schema["$defs"]["SearchResult"]
    assert not js.is_error and js.structured_content == json.loads(js.content[0].text)
    decoded = msgspec.convert(js.structured_content, SearchResult)
    assert decoded.summary.query == "insert_edge" and decoded.findings
    args = ("--root", str(served.repo), "--format", "json", "--limit", "5")
    cli = run_cq("search", "insert_edge", *args)
    assert without_run(json.dumps(js.structured_content)) == without_run(cli.stdout)
    answer = {
        k: v for k, v in js.structured_content["answer"].items() if k not in ("finding", "calls")
    }
    assert answer["kind"] == "definition" and answer["name"] == "insert_edge", answer
    assert md.structured_content == {"markdown": text_of(md), "answer": answer}


def test_a_dash_query_is_an_ordinary_query_over_mcp(tmp_path: Path) -> None:
    """There is no stdin to read over MCP: ``-`` is searched as given, like any text, and the
    schema does not say otherwise."""
    repo = write_tree(tmp_path / "repo", {"calc.py": "def diff(a, b):\n    return a - b\n"})

    async def scenario() -> tuple[str, Any]:
        with (tmp_path / "err").open("w") as errlog:
            async with session(repo, errlog) as client:
                tools = {t.name: t for t in (await client.list_tools()).tools}
                with anyio.fail_after(60):
                    dash = await client.call_tool("search", {"query": "-", "format": "json"})
                return tools["search"].input_schema["properties"]["query"]["description"], dash

    description, dash = anyio.run(scenario)
    assert "stdin" not in description
    assert not dash.is_error
    report = dash.structured_content
    assert report["summary"]["query"] == "-"
    assert [(f["file"], f["line"]) for f in report["findings"]] == [("calc.py", 2)]
    # The CLI searches the same text when stdin says '-'.
    cli = run_cq("search", "-", "--root", str(repo), "--format", "json", stdin="-\n")
    assert without_run(json.dumps(report)) == without_run(cli.stdout)


def _queued(fd: int) -> int:
    """Bytes waiting in a pipe, unread."""
    buf = bytearray(4)
    fcntl.ioctl(fd, termios.FIONREAD, buf)
    return int.from_bytes(buf, sys.byteorder)


def test_a_client_that_never_reads_does_not_keep_the_server_alive(repo: Path) -> None:
    """The client sends searches and never reads: the pipe to it fills and the server's
    writes block. At the end of its input the server still exits, and at once."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "cq", "mcp", "--root", str(repo)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    lines = [INIT, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    call = {"name": "search", "arguments": {"query": "insert_edge", "limit": 0, "format": "json"}}
    lines += [
        {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": call} for n in range(1, 40)
    ]
    proc.stdin.write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    proc.stdin.flush()
    # Full: the pipe holds whole pages, and a write that fits in none blocks.
    full = fcntl.fcntl(proc.stdout.fileno(), fcntl.F_GETPIPE_SZ) - os.sysconf("SC_PAGE_SIZE")
    give_up = time.monotonic() + 240
    while _queued(proc.stdout.fileno()) <= full and time.monotonic() < give_up:
        time.sleep(0.2)
    assert _queued(proc.stdout.fileno()) > full
    proc.stdin.close()
    try:
        proc.wait(timeout=300)  # only ends a hang: 63 s under load
    finally:
        proc.kill()
        stderr = proc.stderr.read() if proc.stderr else b""
    assert proc.returncode == 0 and b"Traceback" not in stderr


def test_a_client_that_closes_its_end_of_the_output_ends_the_server_quietly(repo: Path) -> None:
    """The client closes the pipe it reads from (it went away) but not the one it writes to:
    the server's next reply found a broken pipe and it exited 2 with `cq: internal error`.
    Nobody reads its replies: it ends as at the end of input, exit 0, its searches with it."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "cq", "mcp", "--root", str(repo)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(json.dumps(INIT).encode() + b"\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 0
    proc.stdout.close()
    call = {"name": "search", "arguments": {"query": "insert_edge"}}
    try:
        for n in range(1, 60):  # the server may be gone before the last ones
            line = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": call}
            proc.stdin.write(json.dumps(line).encode() + b"\n")
            proc.stdin.flush()
            time.sleep(0.1)
        proc.wait(timeout=300)  # only ends a hang
    except BrokenPipeError:
        proc.wait(timeout=300)
    finally:
        proc.kill()
    stderr = proc.stderr.read().decode()
    assert proc.returncode == 0 and stderr == "", stderr


def test_a_budget_below_the_least_is_said_to_count_as_the_least(served: Served) -> None:
    """``max_tokens: 50`` is answered within 300, the least an answer gets: the tool's
    description says so, so that an error naming max_tokens 300 is no surprise."""

    async def scenario(client: Client) -> None:
        schema = (await client.list_tools()).tools[0].input_schema
        said = schema["properties"]["max_tokens"]["description"]
        assert "at least 300: a smaller one counts as that" in said, said
        small = await client.call_tool("search", {"query": "x", "max_tokens": 50, "format": "json"})
        assert small.is_error and "over max_tokens 300" in text_of(small), text_of(small)

    served.run(scenario)
