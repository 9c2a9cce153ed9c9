"""What ``cq mcp`` tells its client is worded in the tool's own argument names: the client
calls a tool with ``max_tokens`` and ``limit``, so a report saying ``--max-tokens 300`` or
suggesting ``cq search --root ... --limit 5 Store`` names options it cannot send. Driven by the
real ``mcp`` SDK client over stdio, as an agent would."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
import pytest
from conftest import run_cq, write_tree
from test_mcp_server import FIXTURE, session, text_of

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

CLI_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]+|(?<![\w-])-[a-zA-Z]\b(?!-)")


def calls(repo: Path, tmp_path: Path, *arguments: dict) -> list[str]:
    """The text of each ``search`` call, in one session."""

    async def scenario() -> list[str]:
        with (tmp_path / "server.err").open("w") as errlog:
            async with session(repo, errlog) as client:
                return [text_of(await client.call_tool("search", a)) for a in arguments]

    return anyio.run(scenario)


def test_a_cut_report_and_its_follow_ups_name_the_tools_arguments(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", FIXTURE)
    (md,) = calls(repo, tmp_path, {"query": "insert_edge", "limit": 5, "max_tokens": 300})
    # how many go depends on the report's compact plan; the words are the tool's
    assert re.search(r"\(56 beyond limit; \d+ dropped to fit max_tokens: 300\)", md), md
    follow = md[md.index("## Suggested Follow-ups") :]
    assert 'where `Store`, which defines it, is used: search with `{"query": "Store", ' in follow
    for line in follow.splitlines()[2:]:
        if line.startswith("- "):
            spelt = line.split("search with ", 1)[1].strip("`")
            assert set(json.loads(spelt)) <= {"query", "limit", "in_dir", "focus"}, line
    assert CLI_FLAG.findall(md) == [], md


def test_hints_name_the_tools_arguments(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", FIXTURE)
    file_name, pronoun, scoped = calls(
        repo,
        tmp_path,
        {"query": "use.py"},
        {"query": "what does it return?"},
        {"query": "insert_edge", "lang": "rust"},
    )
    assert "(`in_dir: pkg/use.py` searches it)" in file_name
    assert "give it with `context: TEXT`" in pronoun and "`follow_up: true`" in pronoun
    assert "(lang: rust)" in scoped
    for text in (file_name, pronoun, scoped):
        assert CLI_FLAG.findall(text) == [], text


def test_the_command_line_keeps_its_flags_and_the_json_report_its_fields(
    tmp_path: Path,
) -> None:
    repo = write_tree(tmp_path / "repo", FIXTURE)
    argv = ["search", "insert_edge", "--root", str(repo), "--limit", "5", "--max-tokens", "300"]
    md = run_cq(*argv).stdout
    assert re.search(r"\(56 beyond --limit; \d+ dropped to fit --max-tokens 300\)", md), md
    assert "search --root" in md[md.index("## Suggested Follow-ups") :]
    (tool_json,) = calls(repo, tmp_path, {"query": "insert_edge", "limit": 5, "format": "json"})
    report_of_tool = json.JSONDecoder().raw_decode(tool_json)[0]  # the note follows it
    for report in (json.dumps(report_of_tool), run_cq(*argv[:-2], "--format", "json").stdout):
        (ups,) = [s for s in json.loads(report)["sections"] if s["type"] == "follow_ups"]
        assert ups["follow_ups"] and all(
            set(f) == {"why", "argv", "command"} for f in ups["follow_ups"]
        )
    schema = json.loads(run_cq("schema").stdout)
    assert set(schema["$defs"]["FollowUp"]["properties"]) == {"why", "argv", "command"}
