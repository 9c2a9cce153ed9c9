"""Search options are declared once (``cq.model.options``): the CLI's flags, the MCP tool's
arguments and the ``SearchRequest`` they fill cannot drift apart."""

from __future__ import annotations

import asyncio
from pathlib import Path

import msgspec
import pytest
from conftest import run_cq, write_tree
from test_mcp_server import session

from cq.model import SearchRequest
from cq.model.options import LIMIT_FLAGS, NOT_IN_REQUEST, SEARCH_OPTIONS, tool_arguments

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

INTERNAL = {"limits", "progress"}  # set by the front ends: the profile's caps, a terminal


def test_every_request_field_is_an_option() -> None:
    fields = {f.name for f in msgspec.structs.fields(SearchRequest)} - INTERNAL
    assert fields == {o.name for o in SEARCH_OPTIONS} - set(NOT_IN_REQUEST)


def test_the_cli_spells_every_option_it_declares() -> None:
    helptext = run_cq("search", "--help").stdout
    for option in SEARCH_OPTIONS:
        for flag in (*option.flags, *(f for s in option.spellings for f in s.flags)):
            assert f"{flag} " in helptext or f"{flag}," in helptext or f"{flag}\n" in helptext
    for limit in LIMIT_FLAGS:
        assert limit.flag in helptext


def test_the_mcp_tool_takes_the_table_with_the_requests_defaults(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"a.py": "def handler():\n    pass\n"})

    async def schema() -> dict:
        with (tmp_path / "err").open("w") as errlog:
            async with session(root, errlog) as client:
                tools = {t.name: t for t in (await client.list_tools()).tools}
                return tools["search"].input_schema

    found = asyncio.run(schema())
    arguments = {name: default for name, _, default in tool_arguments()}
    assert set(found["properties"]) == set(arguments)
    assert found["required"] == ["query"]
    for option in SEARCH_OPTIONS:
        name = option.mcp_name or option.name
        if option.mcp and not option.mcp_optional and name != "query":
            default = arguments[name]
            default = list(default) if isinstance(default, tuple) else default
            assert found["properties"][name]["default"] == default, name
            assert found["properties"][name]["description"] == (option.mcp_help or option.help)


def test_cli_and_mcp_defaults_search_alike(tmp_path: Path) -> None:
    """A flag left out means the request's default on both sides: the same findings."""
    root = write_tree(tmp_path / "repo", {"a.py": "def handler():\n    return handler\n"})
    cli = run_cq("search", "handler", "--root", str(root), "--format", "json").json()

    async def over_mcp() -> str:
        with (tmp_path / "err").open("w") as errlog:
            async with session(root, errlog) as client:
                result = await client.call_tool("search", {"query": "handler", "format": "json"})
                return "".join(block.text for block in result.content)

    mcp = msgspec.json.decode(asyncio.run(over_mcp()).encode())
    assert mcp["summary"]["profile"] == cli["summary"]["profile"]
    assert [(f["file"], f["line"], f["col"]) for f in mcp["findings"]] == [
        (f["file"], f["line"], f["col"]) for f in cli["findings"]
    ]
