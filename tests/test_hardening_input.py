"""Hostile and careless input (issue 13): query size and content, ``--timeout``, ``CQ_*``
environment values and an unreadable root, through the real CLI and the real MCP server.

Each case ends in a correct search or one ``cq: ...`` line and exit 2 (a tool error over MCP),
never ``internal error``; hostile texts within the size limit are analysed in linear time
(``bench/studies/rewrite_hostile.py`` has the figures), so they finish like any other search.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from conftest import run_cq, write_tree
from forked_mcp import forked_stdio_client
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from cq.env import SETTINGS, check_environment
from cq.errors import UsageError
from cq.model.request import MAX_QUERY_BYTES
from cq.rewrite.extract import extract_mentions

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

TREE = {
    "pkg/fields.py": (
        "class DateTime:\n"
        "    def deserialize(self, value):\n"
        "        return self._parse(value)\n\n"
        "    def _parse(self, value):\n"
        "        raise ValueError('Not a valid datetime')\n"
    ),
    "pkg/use.py": "from pkg.fields import DateTime\n\nDateTime().deserialize('x')\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "repo", TREE)


def one_line_error(run) -> str:  # type: ignore[no-untyped-def]
    assert run.returncode == 2, run.stdout[-500:]
    assert run.stderr.startswith("cq: ") and run.stderr.count("\n") == 1, run.stderr
    assert "internal error" not in run.stderr and "Traceback" not in run.stderr
    return run.stderr


def test_queries_up_to_the_limit_are_searched_and_longer_ones_refused(repo: Path) -> None:
    two_byte = "é" * (MAX_QUERY_BYTES // 2)  # the limit counts UTF-8 bytes, not characters
    ok = run_cq("search", "-", "--root", str(repo), "--no-rewrite", stdin=two_byte)
    assert ok.returncode == 1 and ok.stderr == ""  # searched, nothing found
    for query in (two_byte + "é", "deserialize " + "x" * MAX_QUERY_BYTES):
        refused = run_cq("search", "-", "--root", str(repo), stdin=query)
        error = one_line_error(refused)
        assert f"more than the {MAX_QUERY_BYTES:,}" in error and "searched" in error


def test_stdin_is_read_no_further_than_the_limit(repo: Path) -> None:
    """A query stream that goes on (a huge file, ``yes | cq search -``) is refused once past
    the limit; cq does not wait for its end. The writer offers 16 times the limit: cq must
    answer while most of it is still unread."""
    chunk, offered = b"DateTime " * 1000, 16 * MAX_QUERY_BYTES
    cmd = [sys.executable, "-m", "cq", "search", "-", "--root", str(repo)]
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdin is not None
    written = 0
    try:
        while written < offered:
            proc.stdin.write(chunk)
            proc.stdin.flush()
            written += len(chunk)
    except BrokenPipeError:
        pass  # cq stopped reading and exited
    with contextlib.suppress(BrokenPipeError):
        proc.stdin.close()
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.wait(timeout=120)
    assert proc.returncode == 2 and out == b"", err
    message = f"cq: the query on stdin is more than the {MAX_QUERY_BYTES:,} bytes searched"
    assert err.decode().startswith(message) and err.count(b"\n") == 1, err
    assert written < offered  # the pipe broke: cq had stopped reading


def test_a_query_from_a_closed_stdin_is_one_line(repo: Path) -> None:
    cmd = [sys.executable, "-m", "cq", "search", "-", "--root", str(repo)]
    run = subprocess.run(["sh", "-c", 'exec "$@" <&-', "sh", *cmd], capture_output=True)
    assert run.returncode == 2 and run.stdout == b""
    assert run.stderr == b"cq: the query is '-' but there is no stdin to read it from\n"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="a device that is always full")
@pytest.mark.parametrize("listing", [(), ("-l",), ("-c",)], ids=["report", "files", "counts"])
def test_a_report_stdout_refuses_is_one_line(repo: Path, listing: tuple[str, ...]) -> None:
    """A full disk under the report (``> /dev/full``) is said, not an internal error."""
    cmd = [sys.executable, "-m", "cq", "search", "deserialize", *listing, "--root", str(repo)]
    with open("/dev/full", "w") as full:
        run = subprocess.run(cmd, stdout=full, stderr=subprocess.PIPE)
    assert run.returncode == 2
    said = "cq: cannot write the report to standard output: No space left on device\n"
    assert run.stderr.decode() == said


@pytest.mark.parametrize(
    "unit",
    ["a-", "x/C:", "a.", "\n", "`", "aB", 'File "', "E: Error: 'x' ", "x.py:", "'\""],
    ids=lambda u: repr(u),
)
def test_hostile_texts_at_the_limit_are_rewritten_and_searched(repo: Path, unit: str) -> None:
    """Each shape made a regex of the extraction rescan runs of text (quadratic or cubic:
    100 KB of ``a-`` never finished); a location after the run must still be found."""
    head, tail = "Issue report\n", "\npkg/fields.py:3: in deserialize\n"
    text = head + (unit * MAX_QUERY_BYTES)[: MAX_QUERY_BYTES - len(head) - len(tail)] + tail
    run = run_cq("search", "-", "--root", str(repo), "--rewrite", "--format", "json", stdin=text)
    assert run.returncode == 0, run.stderr
    rewrite = run.json()["summary"]["rewrite"]
    assert rewrite["applied"] and "deserialize" in rewrite["identifiers"]


def test_extraction_still_reads_locations_next_to_hostile_runs() -> None:
    """The linear patterns find what the old ones found: a drive letter after a separator
    starts a location, a run that is no location is skipped whole."""
    text = "a-" * 5000 + " x/C:\\src\\pkg\\fields.py:12: in deserialize\n    value = parse(v)\n"
    text += "ValueError: " + "b" * 5000 + " could not parse 'x' at 3\n"
    mentions = extract_mentions(text)
    assert mentions.frame_paths == ("C:\\src\\pkg\\fields.py",)
    assert mentions.frame_functions == ("deserialize",)
    assert mentions.messages == ()  # the constant run is longer than any source literal
    short = extract_mentions("ValueError: cannot convert 'x' to a datetime value\n")
    assert short.messages == ("to a datetime value",)  # the longest run between values


def test_a_nul_byte_or_bytes_that_are_no_utf8_in_the_query_are_refused(repo: Path) -> None:
    run = run_cq("search", "-", "--root", str(repo), stdin="deseri\0alize")
    assert "the query contains a NUL byte" in one_line_error(run)
    run = run_cq("search", "deseri\udcffalize", "--root", str(repo))  # byte 0xff in argv
    assert "the query is not valid UTF-8" in one_line_error(run)


@pytest.mark.parametrize(
    ("query", "mode", "found"),
    [
        ("\n\nraise ValueError\n\n", "literal", "pkg/fields.py"),  # pasted with blank lines
        (" \r\n\t\nDateTime\r\n", "identifier", "pkg/use.py"),  # CRLF paste, blanks
        ("\n\n_parse\\(value\\)\n", "regex", "pkg/fields.py"),
    ],
)
def test_a_one_line_query_between_blank_lines_is_searched(
    repo: Path, query: str, mode: str | None, found: str
) -> None:
    """rg matches line by line: the blank lines a paste brings are no part of the pattern."""
    flags = ("--no-rewrite", f"--{mode}") if mode else ("--no-rewrite",)
    run = run_cq("search", query, "--root", str(repo), *flags, "--format", "json")
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert found in {f["file"] for f in run.json()["findings"]}
    assert run.json()["summary"]["mode_chain"][-1] == (mode or "literal")


def test_a_near_miss_between_blank_lines_is_told_the_defined_name(repo: Path) -> None:
    """A word only found inside a longer defined name (``DateTim``): not found, with the
    name it is near suggested (issue 42: did-you-mean, not substring matches)."""
    run = run_cq("search", "\n\nDateTim\n", "--root", str(repo), "--no-rewrite", "--format", "json")
    assert run.returncode == 1 and run.stderr == "", run.stderr
    assert "DateTime" in run.stdout


def test_a_regex_of_several_lines_is_one_line_error(repo: Path) -> None:
    run = run_cq("search", "class DateTime:\n    def", "--root", str(repo), "--regex")
    assert one_line_error(run) == (
        "cq: a regex query must be one line: rg matches line by line (the query has 2 lines)\n"
    )


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "0", "-1", "1e300", "soon"])
def test_unusable_timeouts_are_refused(repo: Path, value: str) -> None:
    run = run_cq("search", "deserialize", "--root", str(repo), f"--timeout={value}")
    assert "--timeout" in one_line_error(run)


def test_a_tiny_timeout_is_a_search_that_timed_out_or_finished(repo: Path) -> None:
    run = run_cq("search", "deserialize", "--root", str(repo), "--timeout=1e-9")
    assert run.returncode in (0, 1) and run.stderr == ""


BAD_VALUES = ("abc", "-1", "nan", "1e999")


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_bad_environment_values_are_named(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Every setting refuses every kind of bad value, by name (the check the CLI and the MCP
    server run before any work; the test below sees its one line through the CLI)."""
    for value in BAD_VALUES:
        monkeypatch.setenv(name, value)
        with pytest.raises(UsageError, match=f"^{name} must be "):
            check_environment()


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_a_bad_environment_value_is_one_line_from_the_cli(repo: Path, name: str) -> None:
    """Each setting once through the real CLI (the bad values taken in turn): one line that
    names it, whatever reads the setting on the search's path."""
    value = BAD_VALUES[sorted(SETTINGS).index(name) % len(BAD_VALUES)]
    run = run_cq("search", "deserialize", "--root", str(repo), env={name: value})
    assert one_line_error(run).startswith(f"cq: {name} must be ")


def test_the_mcp_server_refuses_to_start_with_a_bad_environment_value(repo: Path) -> None:
    run = run_cq("mcp", "--root", str(repo), env={"CQ_MAX_WORKERS": "four"}, stdin="")
    assert one_line_error(run) == "cq: CQ_MAX_WORKERS must be a whole number >= 0: 'four'\n"


@pytest.mark.parametrize("value", ["8k", "1999", "-1"])
def test_a_bad_mcp_token_budget_in_the_environment_is_one_line(repo: Path, value: str) -> None:
    """``CQ_MCP_MAX_TOKENS`` is checked with every other setting: its name, its floor."""
    run = run_cq("mcp", "--root", str(repo), env={"CQ_MCP_MAX_TOKENS": value}, stdin="")
    expected = f"cq: CQ_MCP_MAX_TOKENS must be a whole number >= 2000: {value!r}\n"
    assert one_line_error(run) == expected


def without_permission_checks_bypassed() -> list[str]:
    """A command prefix under which file permissions apply. As root (CI containers), drop
    the two capabilities that bypass them, keeping the uid, so the interpreter stays usable."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    prefix = [setpriv or "setpriv", "--bounding-set", "-dac_override,-dac_read_search"]
    if setpriv is None or subprocess.run([*prefix, "true"], check=False).returncode != 0:
        pytest.skip("running as root without a working setpriv: permissions cannot apply")
    return prefix


def test_an_unreadable_root_is_a_usage_error(repo: Path, tmp_path: Path) -> None:
    as_file = run_cq("search", "deserialize", "--root", str(repo / "pkg" / "use.py"))
    assert "root is not a directory" in one_line_error(as_file)
    prefix = without_permission_checks_bypassed()
    locked = repo / "pkg"
    for mode in (0o000, 0o111, 0o444):  # neither: nor list, nor enter
        locked.chmod(mode)
        try:
            proc = subprocess.run(
                [
                    *prefix,
                    sys.executable,
                    "-m",
                    "cq",
                    "search",
                    "deserialize",
                    "--root",
                    str(locked),
                ],
                capture_output=True,
                text=True,
                timeout=120,
            )
        finally:
            locked.chmod(0o755)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert proc.stderr == f"cq: root is not readable: {locked} (Permission denied)\n"


def mcp_session(root: Path, errlog, prefix: list[str] | None = None) -> Client:  # type: ignore[no-untyped-def]
    env = {k: v for k, v in os.environ.items() if k.startswith(("CQ_", "PATH", "HOME"))}
    argv = [*(prefix or []), sys.executable, "-m", "cq", "mcp", "--root", str(root)]
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
    # forked (forked_mcp) unless the server starts under a prefix, as a process of its own
    transport = (stdio_client if prefix else forked_stdio_client)(params, errlog=errlog)
    return Client(transport, mode="legacy", read_timeout_seconds=120)


def text_of(result) -> str:  # type: ignore[no-untyped-def]
    return "".join(block.text for block in result.content)


def test_mcp_refuses_bad_queries_as_tool_errors_and_serves_on(repo: Path, tmp_path: Path) -> None:
    errlog_path = tmp_path / "server.err"

    async def scenario() -> None:
        with errlog_path.open("w") as errlog:
            async with mcp_session(repo, errlog) as client:
                nul = await client.call_tool("search", {"query": "deseri\0alize"})
                assert nul.is_error and "NUL byte" in text_of(nul)
                huge = await client.call_tool("search", {"query": "a-" * MAX_QUERY_BYTES})
                assert huge.is_error and f"{MAX_QUERY_BYTES:,} searched" in text_of(huge)
                context = await client.call_tool(
                    "search", {"query": "where is it called?", "context": "x\0"}
                )
                assert context.is_error and "the context contains a NUL byte" in text_of(context)
                ok = await client.call_tool("search", {"query": "deserialize", "limit": 3})
                assert not ok.is_error and "pkg/fields.py:2:" in text_of(ok)

    anyio.run(scenario)
    log = errlog_path.read_text()
    assert "Traceback" not in log and "internal error" not in log


def test_mcp_reports_an_unreadable_root_as_a_tool_error(repo: Path, tmp_path: Path) -> None:
    prefix = without_permission_checks_bypassed()
    errlog_path = tmp_path / "server.err"
    locked = repo / "pkg"

    async def scenario() -> None:
        with errlog_path.open("w") as errlog:
            async with mcp_session(locked, errlog, prefix) as client:
                result = await client.call_tool("search", {"query": "deserialize"})
                assert result.is_error
                assert text_of(result).endswith(
                    f"root is not readable: {locked} (Permission denied)"
                ), errlog_path.read_text()[-3000:]

    locked.chmod(0o000)
    try:
        anyio.run(scenario)
    finally:
        locked.chmod(0o755)
    assert "Traceback" not in errlog_path.read_text()
