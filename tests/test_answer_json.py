"""The Answer as data: JSON's ``answer``, ``cq schema`` and MCP's structured content say what
the markdown's Answer line says; and the same question on the same tree answers the same from
a fresh cache and a warm one, Pyrefly's answers in the cache or not. Real ``cq`` subprocesses,
real rg and Pyrefly, the real ``mcp`` SDK client."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from conftest import run_cq, write_tree
from test_mcp_server import session

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

TREE = {
    "shop/store.py": (
        "class Store:\n"
        "    def save(self, item):\n"
        "        '''Keep an item for good.'''\n"
        "        return item\n"
    ),
    "shop/cache.py": (
        "class Cache:\n"
        "    def save(self, item):\n"
        "        '''Keep an item for a while.'''\n"
        "        return item\n"
    ),
    "shop/use.py": (
        "from shop.cache import Cache\n"
        "from shop.store import Store\n\n\n"
        "def remember(item):\n"
        "    return Cache().save(item)\n\n\n"
        "def keep(item):\n"
        "    return Store().save(item)\n"
    ),
}


def _search(repo: Path, cache: Path, *args: str) -> dict:
    env = {"CQ_CACHE_DIR": str(cache), "CQ_SEMANTIC": "1"}  # Pyrefly's answers order callers
    run = run_cq("search", *args, "--root", str(repo), env=env)
    assert run.returncode in (0, 1), run.stderr
    return run.json() if "--format" in args else {"markdown": run.stdout}


def test_json_answer_is_the_markdowns(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", TREE)
    data = _search(repo, tmp_path / "cache", "Store", "--format", "json")
    answer = data["answer"]
    assert answer["kind"] == "definition" and answer["name"] == "Store"
    assert (answer["file"], answer["line"]) == ("shop/store.py", 1)
    assert answer["finding"] == data["summary"]["primary"]
    assert answer["provisional"] is False
    md = _search(repo, tmp_path / "cache", "Store")["markdown"]
    said = next(line for line in md.splitlines() if line.startswith("**Answer:**"))
    assert f"{answer['file']}:{answer['line']}" in said


def test_json_answer_of_a_name_not_found_and_of_a_callers_question(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", TREE)
    missing = _search(repo, tmp_path / "cache", "Warehouse", "--format", "json")["answer"]
    assert missing == {
        "kind": "not_found",
        "name": "Warehouse",
        "file": None,
        "line": None,
        "finding": None,
        "calls": [],
        "total": 0,
        "evidence": [],
        "provisional": False,
    }
    data = _search(repo, tmp_path / "cache", "who calls Store.save?", "--format", "json")
    answer = data["answer"]
    assert answer["kind"] == "callers" and answer["name"] == "Store.save"  # its owner named
    assert (answer["file"], answer["line"]) == ("shop/store.py", 2)
    calls = [data["findings"][i] for i in answer["calls"]]
    assert [(c["file"], c["line"]) for c in calls] == [("shop/use.py", 10)]  # not Cache's


def test_cq_schema_describes_the_answer() -> None:
    schema = json.loads(run_cq("schema").stdout)
    assert schema["$defs"]["SearchResult"]["properties"]["answer"]
    record = schema["$defs"]["AnswerRecord"]["properties"]
    assert {"kind", "name", "file", "line", "evidence", "provisional"} <= set(record)


def test_mcp_structured_content_carries_the_answer(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", TREE)
    cli = _search(repo, tmp_path / "cache", "Store", "--format", "json")

    async def scenario() -> None:
        with (tmp_path / "err").open("w") as errlog:
            async with session(repo, errlog) as client:
                tools = {t.name: t for t in (await client.list_tools()).tools}
                assert "AnswerRecord" in tools["search"].output_schema["$defs"]
                result = await client.call_tool("search", {"query": "Store", "format": "json"})
                assert not result.is_error
                assert result.structured_content["answer"] == cli["answer"]

    anyio.run(scenario)


def _answer_and_order(data: dict) -> tuple[dict, list[tuple[str, int, str]]]:
    """The Answer less ``provisional`` (whether Pyrefly's answers were in: a first run on a
    loaded machine may go without them, and says so), and the findings' order."""
    answer = {k: v for k, v in data["answer"].items() if k != "provisional"}
    return answer, [(f["file"], f["line"], f["category"]) for f in data["findings"]]


def test_a_cold_and_a_warm_run_give_the_same_answer_and_order(tmp_path: Path) -> None:
    """A dotted callers question, whose order Pyrefly's answers decide (the call on a
    ``Store`` ahead of the same-named call on a ``Cache``): the first run from a fresh cache,
    and a run after a long-lived cq's background (here a wait) stored every answer, agree.
    A first run whose Pyrefly did not answer within its wait (a starved machine: the suite
    under ``nice`` beside CPU burners) says it is provisional: its Answer and the sites the
    Answer names still agree, the order of the rest may not."""
    repo = write_tree(tmp_path / "repo", TREE)
    cache = tmp_path / "cache"
    question = ("who calls Store.save?", "--format", "json")
    first = _search(repo, cache, *question)
    cold = _answer_and_order(first)
    _search(repo, cache, *question, "--semantic-wait", "60000")  # the answers stored
    warm = _answer_and_order(_search(repo, cache, *question))
    assert cold[0] == warm[0]
    if first["answer"]["provisional"]:
        assert cold[1][:2] == warm[1][:2]
    else:
        assert cold == warm
    # the definition asked about leads, then the call on a Store; the Cache's call is no caller
    assert warm[1][:2] == [("shop/store.py", 2, "definition"), ("shop/use.py", 10, "callsite")]
