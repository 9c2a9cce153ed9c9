"""``cq mcp`` as a real subprocess, driven by the official SDK client over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
from conftest import run_cq, write_tree
from forked_mcp import forked_stdio_client
from mcp import Client, StdioServerParameters

from cq.model import SearchResult

# run_cq: what the CLI prints, compared with the server's answers or checked for one line
# (forked_cli.py, from a process that has the SDK imported); the server is a process of its
# own (the SDK's stdio client), and so are the tests of what the process imports
pytestmark = pytest.mark.cli_forked

FIXTURE = {
    "pkg/store.py": (
        "class Store:\n"
        "    def insert_edge(self, a, b):\n"
        "        '''Insert an edge.'''\n"
        "        return (a, b)\n"
    ),
    "pkg/use.py": (
        "from pkg.store import Store\n\n"
        + "".join(f"def caller_{i}(s: Store):\n    s.insert_edge({i}, {i})\n\n" for i in range(60))
    ),
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "repo", FIXTURE)


def server_params(root: Path, *extra: str) -> StdioServerParameters:
    # XDG_*: the test's own user config dir (conftest), never the machine's.
    env = {k: v for k, v in os.environ.items() if k.startswith(("CQ_", "PATH", "HOME", "XDG_"))}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "cq", "mcp", "--root", str(root), *extra], env=env
    )


def session(root: Path, errlog, *extra: str) -> Client:
    """A client of ``cq mcp --root ROOT EXTRA``, forked from this process (``forked_mcp``)."""
    transport = forked_stdio_client(server_params(root, *extra), errlog=errlog)
    return Client(transport, mode="legacy", read_timeout_seconds=120)


def text_of(result: Any) -> str:
    return "".join(block.text for block in result.content)


def without_run(report: str) -> dict:
    data = json.loads(report)
    data.pop("run")
    return data


def test_search_tool_end_to_end(repo: Path, tmp_path: Path) -> None:
    errlog_path = tmp_path / "server.err"

    async def scenario() -> None:
        with errlog_path.open("w") as errlog:
            async with session(repo, errlog) as client:
                assert client.server_info is not None and client.server_info.name == "cq"
                tools = {t.name: t for t in (await client.list_tools()).tools}
                assert set(tools) == {"search", "stats"}
                props = set(tools["search"].input_schema["properties"])
                mirrored = {"query", "root", "lang", "mode", "include", "exclude", "focus"}
                mirrored |= {"rewrite", "limit", "max_tokens", "format"}
                assert mirrored <= props

                md = await client.call_tool("search", {"query": "insert_edge", "limit": 5})
                assert not md.is_error
                assert "pkg/store.py:2:" in text_of(md)

                # limit 10: thirty enriched findings are more than the default token budget.
                query = {"query": "insert_edge", "format": "json", "limit": 10}
                js = await client.call_tool("search", query)
                cli = run_cq(
                    "search",
                    "insert_edge",
                    "--root",
                    str(repo),
                    "--format",
                    "json",
                    "--limit",
                    "10",
                )
                assert without_run(md_first(js)) == without_run(cli.stdout)
                # What `cq schema` describes: the JSON decodes strictly into the result type.
                decoded = msgspec.json.decode(md_first(js), type=SearchResult)
                assert decoded.summary.query == "insert_edge"

                bad = await client.call_tool("search", {"query": "insert_edge", "limit": "x"})
                assert bad.is_error and "limit" in text_of(bad)
                missing = await client.call_tool("search", {"limit": 3})
                assert missing.is_error and "query" in text_of(missing)
                unknown = await client.call_tool("grep", {"query": "x"})
                assert unknown.is_error

                regex = await client.call_tool("search", {"query": "(", "mode": "regex"})
                cli_err = run_cq("search", "(", "--regex", "--root", str(repo))
                assert regex.is_error
                assert cli_err.stderr.removeprefix("cq: ").strip() in text_of(regex)
                gone = await client.call_tool("search", {"query": "x", "root": "/no/such/dir"})
                assert gone.is_error and "/no/such/dir" in text_of(gone)
                blank = await client.call_tool("search", {"query": "   "})
                assert blank.is_error and "empty query" in text_of(blank)
                question = await client.call_tool(
                    "search", {"query": "how are edges inserted", "limit": 3}
                )
                assert "defined at `pkg/store.py:2:" in text_of(question)  # rewritten, found
                assert "`pkg/store.py::Store.insert_edge`" in text_of(question)  # the index's
                plain = await client.call_tool(
                    "search", {"query": "how are edges inserted", "limit": 3, "no_index": True}
                )
                assert "Relevant Functions" not in text_of(plain)
                sub = await client.call_tool("search", {"query": "insert_edge", "in_dir": "pkg"})
                assert "`pkg/store.py:2:" in text_of(sub)  # a subtree of the server's root

                for _ in range(10):
                    again = await client.call_tool("search", {"query": "insert_edge", "limit": 5})
                    assert text_lines(again) == text_lines(md)
                stats = json.loads(text_of(await client.call_tool("stats", {})))
                assert stats["server"]["calls"] == 20 and stats["server"]["errors"] == 5

    anyio.run(scenario)
    assert "Traceback" not in errlog_path.read_text()


def test_names_that_are_not_utf8_keep_the_server_answering(tmp_path: Path) -> None:
    """A file and the server's root whose names are not UTF-8: every call is answered, the
    structured content spelling the name as the markdown does (the wire carries no lone
    surrogate), the JSON text as the CLI writes it."""
    root = write_tree(tmp_path / "repo_\udce9", FIXTURE)
    (root / "bad_\udcff.py").write_bytes(b"def odd_one():\n    return odd_one\n")
    errlog_path = tmp_path / "server.err"

    async def scenario() -> None:
        with errlog_path.open("w") as errlog:
            async with session(root, errlog) as client:
                js = await client.call_tool("search", {"query": "odd_one", "format": "json"})
                assert not js.is_error, text_of(js)
                files = {f["file"] for f in js.structured_content["findings"]}
                assert files == {"bad_\\udcff.py"}
                cli = run_cq("search", "odd_one", "--root", str(root), "--format", "json")
                assert without_run(md_first(js)) == without_run(cli.stdout)
                other = await client.call_tool("search", {"query": "x", "root": str(tmp_path)})
                assert other.is_error and "repo_\\udce9" in text_of(other)
                md = await client.call_tool("search", {"query": "insert_edge", "limit": 5})
                assert "pkg/store.py:2:" in text_of(md)  # still answering

    anyio.run(scenario)
    assert "Traceback" not in errlog_path.read_text()


def test_repeat_calls_are_served_from_warm_caches(repo: Path, tmp_path: Path) -> None:
    """Warmth shown by counters, not wall time: after the first call no file is parsed
    again, and a repeated call parses nothing."""

    async def scenario() -> None:
        with (tmp_path / "err").open("w") as errlog:
            async with session(repo, errlog) as client:

                async def parse_counters() -> dict[str, int]:
                    """The process's parses (keyed by content hash, and by the bytes of the
                    statements tree-sitter reads a hit in): ast-grep's are of whole files
                    in a long-lived process."""
                    stats = json.loads(text_of(await client.call_tool("stats", {})))
                    return stats["caches"]["parse"]

                first = {"query": "insert_edge", "format": "json", "limit": 5}
                md_first(await client.call_tool("search", first))
                one = await parse_counters()
                assert one["sg.misses"] > 0  # the first call parsed the files it enriched
                # Another query over the same files: their trees come from the process's
                # caches; tree-sitter reads the new hits' statements alone.
                md_first(await client.call_tool("search", {"query": "Store", "limit": 5}))
                two = await parse_counters()
                assert two["sg.misses"] == one["sg.misses"] and two["sg.hits"] > one["sg.hits"]
                again = json.loads(md_first(await client.call_tool("search", first)))
                three = await parse_counters()
                assert (three["sg.misses"], three["tree_sitter.misses"]) == (
                    two["sg.misses"],
                    two["tree_sitter.misses"],
                )
                # The classifier's records come from its cache (sqlite: one connection, which
                # only works if every call runs on the thread that opened it).
                counters = again["run"]["counters"]
                assert counters["cache_hits"] == 2 and counters.get("cache_misses", 0) == 0
                assert counters.get("files_parsed", 0) == 0, counters

    anyio.run(scenario)


def md_first(result: Any) -> str:
    assert not result.is_error
    return result.content[0].text


def text_lines(result: Any) -> list[str]:
    """The report without its volatile ``run:`` timing line."""
    return [line for line in text_of(result).splitlines() if not line.startswith("run:")]


def test_no_answer_exceeds_the_token_budget(repo: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        with (tmp_path / "err").open("w") as errlog:
            async with session(repo, errlog, "--max-tokens", "4000") as client:
                # At the server's cap: cut, and the note does not suggest a higher budget.
                r = await client.call_tool(
                    "search", {"query": "insert_edge", "limit": 0, "format": "json"}
                )
                assert len(text_of(r)) <= 4000 * 4
                assert "left out" in text_of(r) and "higher max_tokens" not in text_of(r)
                report = json.loads(md_first(r))
                assert 0 < report["summary"]["shown_findings"] < 61
                assert report["summary"]["omitted"]["by_budget"] > 0
                # Asking for more than the server allows is capped.
                big = await client.call_tool(
                    "search",
                    {"query": "insert_edge", "limit": 0, "max_tokens": 10**6, "format": "json"},
                )
                assert len(text_of(big)) <= 4000 * 4
                # A smaller budget is honoured, and the note says how to get more.
                small = await client.call_tool(
                    "search", {"query": "insert_edge", "max_tokens": 300, "limit": 0}
                )
                assert len(text_of(small)) <= 300 * 4
                assert "left out" in text_of(small) and "up to 4000" in text_of(small)
                # The header and the note name the same budget, the one the call had (the
                # header named the budget left after the note's share, 234 for 300).
                header = next(ln for ln in text_of(small).splitlines() if "dropped to fit" in ln)
                assert "dropped to fit max_tokens: 300)" in header, header
                assert "to fit max_tokens 300" in text_of(small)
                everything = await client.call_tool("search", {"query": "Insert", "limit": 0})
                assert "Insert an edge" in text_of(everything)
                assert "left out" not in text_of(everything)
                # JSON cannot be cut below its summary: an actionable error, not a broken answer.
                tiny = await client.call_tool(
                    "search", {"query": "insert_edge", "max_tokens": 300, "format": "json"}
                )
                assert tiny.is_error and "raise max_tokens" in text_of(tiny)

    anyio.run(scenario)


def test_malformed_protocol_messages_get_errors_and_stdin_eof_exits_cleanly(repo: Path) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    lines = [
        init,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        "this is not json",
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"arguments": {}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "cq", "mcp", "--root", str(repo)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin and proc.stdout
    for line in lines:
        proc.stdin.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
    proc.stdin.flush()
    replies = {}
    while len(replies) < 4:
        reply = json.loads(proc.stdout.readline())
        replies[reply["id"]] = reply
    # closes stdin: EOF ends the session (the bound only ends a hang: 56 s under load)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0 and "Traceback" not in stderr
    assert replies[None]["error"]["code"] == -32700  # the line that is not JSON
    assert replies[2]["error"]["code"] == -32602
    assert [t["name"] for t in replies[3]["result"]["tools"]] == ["search", "stats"]


def test_cq_mcp_rejects_bad_options_in_one_line(tmp_path: Path) -> None:
    run = run_cq("mcp", "--root", str(tmp_path / "missing"))
    assert run.returncode == 2 and run.stderr.startswith("cq: ") and run.stderr.count("\n") == 1
    run = run_cq("mcp", "--max-tokens", "1000", "--root", str(tmp_path))
    assert run.returncode == 2 and "at least" in run.stderr
    # A budget past what the frames to the search processes carry made every call an
    # internal error (a traceback on stderr); it is refused at start, from either source.
    huge = str(10**23)
    run = run_cq("mcp", "--max-tokens", huge, "--root", str(tmp_path), stdin="")
    assert (
        run.returncode == 2
        and run.stderr == f"cq: --max-tokens must be at most 2147483647: {huge}\n"
    )
    run = run_cq("mcp", "--root", str(tmp_path), stdin="", env={"CQ_MCP_MAX_TOKENS": huge})
    assert run.returncode == 2
    assert run.stderr == f"cq: CQ_MCP_MAX_TOKENS must be at most 2147483647: {huge}\n"


def test_cq_search_does_not_import_the_mcp_sdk(repo: Path) -> None:
    code = (
        "import sys; from cq.cli import main; main(['search', 'Store', '--root', sys.argv[1]]);"
        "print('MCP-LOADED' if any(m.split('.')[0] == 'mcp' for m in sys.modules) else '')"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(repo)], capture_output=True, text=True, check=True
    )
    assert "MCP-LOADED" not in out.stdout


def test_a_cancelled_search_stops_early_and_the_server_serves_on(tmp_path: Path) -> None:
    """The client gives up on a slow search: the server stops that search's work instead of
    finishing it, then answers the next call."""
    body = "".join(
        f"def target_{i}(x):\n    '''Doc.'''\n    return target_{i}(x) + {i}\n" for i in range(400)
    )
    root = write_tree(tmp_path / "big", {f"m{i:03d}.py": body for i in range(300)})  # ~10 MB

    async def scenario() -> None:
        with (tmp_path / "err").open("w") as errlog:
            async with session(root, errlog) as client:
                with anyio.move_on_after(0.3) as scope:  # cold: seconds of classification
                    await client.call_tool("search", {"query": "x", "limit": 0})
                assert scope.cancelled_caught
                counters: dict[str, int] = {}
                with anyio.fail_after(60):
                    while counters.get("stopped_early", 0) == 0:
                        stats = json.loads(text_of(await client.call_tool("stats", {})))
                        counters = stats["server"]
                        await anyio.sleep(0.1)
                assert counters["cancelled"] == 1 and counters["stopped_early"] == 1
                after = await client.call_tool("search", {"query": "target_7", "limit": 3})
                assert not after.is_error and "m000.py" in text_of(after)

    anyio.run(scenario)


def test_a_search_process_past_its_memory_bound_is_replaced_and_no_search_is_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long-lived ``cq mcp`` gives its memory back as ``cq server`` does: a search process
    resident past ``CQ_SERVER_PROCESS_MAX_MB`` after a search retires, and the next call is
    answered by a fresh one, not failed (here every process is past 1 MB: each retires)."""
    monkeypatch.setenv("CQ_SERVER_PROCESS_MAX_MB", "1")
    root = write_tree(tmp_path / "repo", {"app.py": "def register(name):\n    return name\n"})

    async def scenario() -> None:
        with (tmp_path / "err").open("w") as errlog:
            async with session(root, errlog) as client:
                for _ in range(3):
                    found = await client.call_tool("search", {"query": "register", "limit": 3})
                    assert not found.is_error, text_of(found)
                    assert "app.py:1:" in text_of(found)
                stats = json.loads(text_of(await client.call_tool("stats", {})))
                assert stats["server"]["retired"] == 3
                assert stats["server"]["errors"] == 0

    anyio.run(scenario)


STORAGE = (
    "import os\n\n\nclass FileSystemStorage:\n"
    "    def delete(self, name):\n        os.remove(name)\n"
)
TRACEBACK = (
    "Deleting an upload that is already gone raises\n\n```\n"
    "Traceback (most recent call last):\n"
    '  File "/srv/venv/lib/python3.11/site-packages/app/files/storage.py", line 6, in delete\n'
    "FileNotFoundError: [Errno 2] No such file or directory: 'a.txt'\n```"
)


def test_explain_over_mcp_keeps_the_ranks_among_named_files(tmp_path: Path) -> None:
    """--explain's rank among the files the text names (a traceback frame) reaches an MCP
    client as it reaches the CLI, in markdown and in JSON, and survives decoding that JSON
    into the type ``cq schema`` describes (a subclass of the breakdown did not)."""
    repo = write_tree(
        tmp_path / "repo",
        {"app/files/storage.py": STORAGE, "app/files/handlers.py": "def receive():\n    pass\n"},
    )
    cli = run_cq(
        "search", "-", "--root", str(repo), "--explain", "--format", "json", stdin=TRACEBACK
    )
    assert cli.json()["findings"][0]["explain"]["file_rank_named"] == 1
    ask = {"query": TRACEBACK, "explain": True, "limit": 30}

    async def scenario() -> tuple[str, str]:
        with (tmp_path / "server.err").open("w") as errlog:
            async with session(repo, errlog) as client:
                js = await client.call_tool("search", {**ask, "format": "json"})
                md = await client.call_tool("search", ask)
                return md_first(js), text_of(md)

    js, md = anyio.run(scenario)
    assert without_run(js) == without_run(cli.stdout)
    assert json.loads(js)["findings"][0]["explain"]["file_rank_named"] == 1
    assert "named #1" in md
    explain = msgspec.json.decode(js, type=SearchResult).findings[0].explain
    assert explain is not None and explain.file_rank_named == 1
    schema = json.loads(run_cq("schema").stdout)
    assert "file_rank_named" in schema["$defs"]["ScoreBreakdown"]["properties"]


def test_the_help_names_both_tools() -> None:
    """``cq mcp --help`` names the tools ``tools/list`` gives (search and stats)."""
    run = run_cq("mcp", "--help")
    assert run.returncode == 0
    said = " ".join(run.stdout.split())
    assert "'search' tool (and 'stats': the server's counters)" in said, run.stdout
