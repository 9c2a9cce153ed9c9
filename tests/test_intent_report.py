"""What a report says about its hits, once: a small report does not print each hit three or
four times, and under a token budget the sections that repeat Top Contexts go before any
finding does."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)


def test_a_report_of_two_hits_prints_each_once_beside_the_answer(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "a.py": "def compute_totals(rows):\n    return sum(rows)\n",
            "b.py": "from a import compute_totals\n",
        },
    )
    run = run_cq("search", "compute_totals", "--root", str(tmp_path))
    assert run.returncode == 0, run.stderr
    md = run.stdout
    # the Answer and its Top Contexts group; the import in its group
    assert md.count("`a.py:1:4`") == 2, md
    assert md.count("`b.py:1:14`") == 1, md
    # each hit's kind and line are printed beside it, the file above it
    for title in ("## Uses by Kind", "## Definitions", "## Imports", "## Hot Files"):
        assert title not in md, md
    data = run_cq("search", "compute_totals", "--root", str(tmp_path), "--format", "json").json()
    titles = [s.get("title") for s in data["sections"]]  # the JSON keeps every fact
    assert "Definitions" in titles and "Uses by Kind" in titles


def test_under_a_budget_repeated_sections_go_before_findings(tmp_path: Path) -> None:
    files = {f"pkg/m{i}.py": f"def helper_{i}():\n    return load_rows()\n" for i in range(8)}
    files["pkg/rows.py"] = "def load_rows():\n    return []\n"
    write_tree(tmp_path, files)
    args = ("search", "load_rows", "--root", str(tmp_path), "--no-semantic")
    full = run_cq(*args).stdout
    assert "## Callsites" in full and "## Hot Files" in full
    budget = len(full) // 4 - 25  # under the whole report, over its findings alone
    cut = run_cq(*args, "--max-tokens", str(budget))
    assert cut.returncode == 0, cut.stderr
    assert "## Hot Files" not in cut.stdout and "## Uses by Kind" not in cut.stdout
    assert "9 findings, 9 shown" in cut.stdout, cut.stdout  # no finding dropped


def test_a_regex_definition_is_resolved_at_its_name(tmp_path: Path) -> None:
    """``--regex 'def compute_\\w+'`` matches a whole header: the definition is its name's, at
    the name (where Pyrefly and the Answer resolve it), not at the ``def`` keyword."""
    write_tree(
        tmp_path,
        {"a.py": "def compute_totals(rows):\n    return sum(rows)\n\n\nx = compute_totals([1])\n"},
    )
    args = ("search", "--regex", r"def compute_\w+", "--root", str(tmp_path))
    data = run_cq(*args, "--format", "json").json()
    (f,) = data["findings"]
    assert (f["category"], f["col"], f["text"]) == ("definition", 4, "compute_totals")
    md = run_cq(*args).stdout
    assert "**Answer:** `compute_totals` — `def compute_totals(rows):` defined at `a.py:1:4`" in md


def test_follow_ups_over_mcp_are_tool_calls(tmp_path: Path) -> None:
    """An agent connected over MCP is offered the ``search`` tool's calls, not shell lines it
    would have to run through another tool."""
    import json
    import os
    import sys

    import anyio
    from forked_mcp import forked_stdio_client
    from mcp import Client, StdioServerParameters

    root = write_tree(
        tmp_path / "repo",
        {
            "app/alpha.py": (
                "class Alpha:\n    def build(self):\n        return 1\n\n"
                "    def rebuild(self):\n        return self.build()\n"
            ),
        },
    )
    env = {k: v for k, v in os.environ.items() if k.startswith(("CQ_", "PATH", "HOME", "XDG_"))}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "cq", "mcp", "--root", str(root)], env=env
    )
    seen: list[str] = []

    async def scenario() -> None:
        with (tmp_path / "server.err").open("w") as errlog:
            transport = forked_stdio_client(params, errlog=errlog)
            async with Client(transport, mode="legacy", read_timeout_seconds=120) as client:
                md = await client.call_tool("search", {"query": "build"})
                seen.append("".join(block.text for block in md.content))

    anyio.run(scenario)
    follow = seen[0].split("## Suggested Follow-ups", 1)[1]
    assert " search --root " not in follow, follow  # no shell line
    lines = follow.strip().splitlines()
    assert lines and all(": search with `{" in line for line in lines), follow
    args = [json.loads(line.split(": search with `", 1)[1].rstrip("`")) for line in lines]
    assert all(a["query"] for a in args), args
    assert "who calls Alpha.rebuild?" in {a["query"] for a in args}  # the caller, its owner
    cli = run_cq("search", "build", "--root", str(root)).stdout  # the CLI keeps shell lines
    assert " search --root " in cli.split("## Suggested Follow-ups", 1)[1]
