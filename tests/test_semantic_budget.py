"""Pyrefly never delays a report, against the real ``pyrefly lsp`` (and a hanging stand-in
binary for a server that never answers): a search shows the answers cq's cache holds and
counts the rest as pending; a long-lived process (``cq mcp``) asks for them in the
background and shows them from a later search on; a one-shot search starts no Pyrefly
unless told to wait.

The tree is that of ``test_semantic.py``; the helpers are in ``semantic_cli.py``.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
from pathlib import Path

import anyio
import pytest

from cq.model import SearchRequest
from cq.pipeline import run_search
from cq.report import render_markdown
from cq.semantic.later import later
from cq.semantic.pool import pool
from cq.semantic.server import pyrefly_binary
from cq.server.warm import search_begins, warm_between
from tests.conftest import run_cq, write_tree
from tests.semantic_cli import (
    ANSWER_BUDGET,
    search_json,
    semantic_of,
    semantic_on,  # noqa: F401  (autouse: applies by being imported)
)
from tests.test_semantic import GRAPH, OTHER, USE

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

CODE = {"definition", "callsite", "import", "from_import", "reference", "assignment", "annotation"}
NO_WAIT = {"CQ_SEMANTIC_WAIT_MS": "0"}  # the default: the tests' fixture waits


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    files = {"pkg/__init__.py": "", "pkg/graph.py": GRAPH, "pkg/other.py": OTHER, "pkg/use.py": USE}
    return write_tree(tmp_path / "repo", files)


@pytest.fixture
def hanging_pyrefly(tmp_path: Path) -> tuple[Path, Path]:
    """A ``pyrefly`` that notes each start in a file and then never answers. ``sleep`` by
    its full path: cq starts Pyrefly with ``PATH`` an empty directory (a bare ``sleep`` was
    not found, and the stand-in exited at once instead of hanging)."""
    started = tmp_path / "started"
    binary = tmp_path / "bin" / "pyrefly"
    binary.parent.mkdir()
    sleep = shutil.which("sleep")
    assert sleep is not None
    binary.write_text(f"#!/bin/sh\necho $$ >> '{started}'\nexec '{sleep}' 600\n")
    binary.chmod(0o755)
    return binary, started


def _ran(started: Path) -> bool:
    """Whether the stand-in started (``hanging_pyrefly``): its process, once started, notes
    itself when the machine gets to it (a loaded one took over a second), and nothing but the
    wait's bound says it never will."""
    end = time.monotonic() + 300  # a condition, not a clock: generous on a busy machine
    while not started.exists() and time.monotonic() < end:
        time.sleep(0.05)
    return started.exists()


def _code_facts(result: dict) -> list[dict]:
    return [semantic_of(f) for f in result["findings"] if f["category"] in CODE]


def test_a_one_shot_search_shows_pending_answers_and_starts_no_pyrefly(
    repo: Path, hanging_pyrefly: tuple[Path, Path]
) -> None:
    binary, started = hanging_pyrefly
    env = {**NO_WAIT, "CQ_PYREFLY": str(binary)}
    first = search_json(repo, "build_graph_product", env=env)
    facts = _code_facts(first)
    assert facts and {s["status"] for s in facts} == {"pending"}
    assert first["summary"]["semantic"] == {"pending": len(facts), "asking": "none", "partial": 0}
    assert not started.exists()  # the report waited for no server: none was started
    again = search_json(repo, "build_graph_product", env=env)
    assert again | {"run": None} == first | {"run": None}  # the same cache, the same report
    markdown = run_cq("search", "build_graph_product", "--root", str(repo), env=env).stdout
    assert f"types of {len(facts)} shown hits not worked out yet (Pyrefly); --semantic-wait" in (
        markdown
    )


def test_a_wait_fills_the_cache_that_a_later_search_shows_without_waiting(repo: Path) -> None:
    waited = search_json(repo, "build_graph_product", env=ANSWER_BUDGET)
    assert {s["status"] for s in _code_facts(waited)} == {"applied"}
    shown = search_json(repo, "build_graph_product", env=NO_WAIT)
    assert shown["summary"]["semantic"] == {"pending": 0, "asking": "none", "partial": 0}
    assert _code_facts(shown) == _code_facts(waited)


def test_a_hanging_server_does_not_delay_a_long_lived_process_search(
    repo: Path, hanging_pyrefly: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    binary, started = hanging_pyrefly
    monkeypatch.setenv("CQ_PYREFLY", str(binary))
    monkeypatch.setenv("CQ_SEMANTIC_WAIT_MS", "0")
    monkeypatch.setenv("CQ_SEMANTIC_BUDGET_MS", "3000")  # the background batch's own limit
    monkeypatch.setattr(pool(), "warm", True)  # as cq mcp's workers: keep_warm
    try:
        result = run_search(SearchRequest(query="build_graph_product", root=str(repo)))
        assert later().idle(60)  # the background batch gave up on the silent server
        assert _ran(started)  # the background asked it
    finally:
        pool().stop_all()
    facts = [f.enrichment.semantic for f in result.findings if f.category in CODE]
    assert facts and {s.status for s in facts} == {"pending"}
    assert result.summary.semantic is not None and result.summary.semantic.asking == "background"
    # had the search waited for the batch it would have taken its 3 s: any less is not
    # waiting, however slow a loaded machine makes the stage's own work
    assert result.run.timings_ms["semantic"] < 3000


def test_a_long_lived_process_asks_pyrefly_only_once_its_search_is_done(
    repo: Path, hanging_pyrefly: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The background batch a search queues waits until the search process says it is done
    (``cq.server.warm``): its work would otherwise share the interpreter with the rest of
    that search, and with the next one that comes at once. Only the root's server starts
    during the search, from its ranking on (``SemanticRun.prepare``: Pyrefly, below the
    search's priority, reads the shown hits' files while enrichment runs)."""
    binary, started = hanging_pyrefly
    monkeypatch.setenv("CQ_PYREFLY", str(binary))
    monkeypatch.setenv("CQ_SEMANTIC_WAIT_MS", "0")
    monkeypatch.setenv("CQ_SEMANTIC_BUDGET_MS", "3000")
    monkeypatch.setattr(pool(), "warm", True)
    searching = threading.Event()
    search_begins(searching)
    try:
        try:
            result = run_search(SearchRequest(query="build_graph_product", root=str(repo)))
            assert result.summary.semantic is not None
            assert result.summary.semantic.asking == "background"
            assert not later().idle(1.0)  # queued, not run: the search is not done
            assert _ran(started)  # the server, started after ranking (nothing else runs)
        finally:
            warm_between(searching)
        assert later().idle(60)  # asked once the search was done (and gave up on silence)
    finally:
        pool().stop_all()


def test_mcp_shows_from_a_later_search_the_answers_the_first_left_pending(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.test_mcp_server import session, text_of

    monkeypatch.setenv("CQ_SEMANTIC_WAIT_MS", "0")
    results: list[dict] = []

    async def scenario() -> None:
        with (tmp_path / "server.err").open("w") as errlog:
            async with session(repo, errlog) as client:
                end = time.monotonic() + 300  # a hang bound, generous on a busy machine
                while time.monotonic() < end:
                    answer = await client.call_tool(
                        "search", {"query": "build_graph_product", "format": "json"}
                    )
                    assert not answer.is_error
                    results.append(json.loads(text_of(answer)))
                    told = results[-1]["summary"]["semantic"]
                    if told["pending"] == 0 and told["partial"] == 0:
                        return
                    await anyio.sleep(0.5)

    anyio.run(scenario)
    first, last = results[0], results[-1]
    assert first["summary"]["semantic"]["asking"] == "background"
    assert {s["status"] for s in _code_facts(first)} == {"pending"}
    assert last["summary"]["semantic"]["pending"] == 0, "never answered in the background"
    assert {s["status"] for s in _code_facts(last)} == {"applied"}
    calls = [f for f in last["findings"] if f["category"] == "callsite"]
    assert calls and all(semantic_of(f)["definition"]["file"] == "pkg/graph.py" for f in calls)


@pytest.fixture
def still_indexing(tmp_path: Path) -> Path:
    """The real Pyrefly, its stderr without the line that says the workspace is indexed: to
    cq it is indexing the root for as long as the test runs (a large tree's index took 30 s
    on moto), and answers everything else as Pyrefly does. ``grep`` by its full path: cq
    starts Pyrefly with ``PATH`` an empty directory, and without a filter Pyrefly's first
    line to stderr ended it (each search then started another server, ~80 of them before
    one lived: a minute of the suite)."""
    real = pyrefly_binary()
    grep = shutil.which("grep")
    assert real is not None and grep is not None
    binary = tmp_path / "indexing" / "pyrefly"
    binary.parent.mkdir()
    binary.write_text(
        f"#!/bin/bash\nexec '{real}' \"$@\" 2> >('{grep}' --line-buffered -v 'Populated all' >&2)\n"
    )
    binary.chmod(0o755)
    return binary


def test_a_later_search_shows_the_definitions_while_pyrefly_still_indexes(
    repo: Path, still_indexing: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long-lived process stores each hit's type and definition as soon as Pyrefly gives
    them, apart from its reference count and errors (which wait for Pyrefly's index of the
    root): a search made in between shows the definitions, says the rest is still to come,
    and orders a callers question by them."""
    monkeypatch.setenv("CQ_PYREFLY", str(still_indexing))
    monkeypatch.setenv("CQ_SEMANTIC_WAIT_MS", "0")
    monkeypatch.setenv("CQ_SEMANTIC_BUDGET_MS", "600000")  # the index never comes: no cut
    monkeypatch.setattr(pool(), "warm", True)  # as cq's server and cq mcp's workers
    request = SearchRequest(query="build_graph_product", root=str(repo))
    callers = SearchRequest(query="who calls build_graph_product", root=str(repo))
    try:
        first = run_search(request)
        end = time.monotonic() + 300  # a bound for a test gone wrong, not a timing
        shown = first
        while shown.summary.semantic is not None and shown.summary.semantic.pending:
            assert time.monotonic() < end, "no first answers stored"
            time.sleep(0.2)
            shown = run_search(request)
        asked = run_search(callers)  # its order waits for nothing: the definitions are in
    finally:
        pool().stop_all()
        assert later().idle(60)  # the second steps gave up on the stopped server
    assert first.summary.semantic is not None and first.summary.semantic.pending
    semantic = shown.summary.semantic
    code = [f for f in shown.findings if f.category in CODE]
    assert semantic is not None and semantic.partial == len(code) > 0
    facts = [f.enrichment.semantic for f in code if f.enrichment is not None]
    assert {s.status for s in facts if s is not None} == {"degraded"}
    assert all("still being asked" in (s.reason or "") for s in facts if s is not None)
    calls = [f for f in code if f.category == "callsite"]
    assert calls and all(
        f.enrichment.semantic.definition.file == "pkg/graph.py"  # type: ignore[union-attr]
        for f in calls
    )
    markdown = render_markdown(shown)
    assert f"reference counts and errors of {len(code)} shown hits still being worked out" in (
        markdown
    )
    told = asked.summary.semantic
    assert told is not None and told.pending == 0 and told.partial > 0
    assert asked.findings[0].category == "callsite"  # the resolved callers lead
    assert asked.answer is not None and not asked.answer.provisional  # definitions are final


def test_a_one_shot_search_reports_no_reference_counts_and_mcp_does(
    repo: Path, tmp_path: Path
) -> None:
    """A one-shot search's Pyrefly runs without a workspace index (reference counts need it):
    the definition is ``applied`` without a count; cq mcp's warm server indexes and counts."""
    from tests.test_mcp_server import session, text_of

    one_shot = search_json(repo, "build_graph_product", env=ANSWER_BUDGET)
    definition = next(f for f in one_shot["findings"] if f["category"] == "definition")
    assert semantic_of(definition)["status"] == "applied"
    assert "references" not in semantic_of(definition)
    assert (
        "references"
        not in run_cq(
            "search", "build_graph_product", "--root", str(repo), env=ANSWER_BUDGET
        ).stdout.split("## ")[0]
    )
    uses = len(re.findall(r"\bbuild_graph_product\b", USE))  # the import and two calls
    counted: list[int] = []

    async def scenario() -> None:
        with (tmp_path / "server.err").open("w") as errlog:
            async with session(repo, errlog) as client:
                answer = await client.call_tool(
                    "search", {"query": "build_graph_product", "format": "json"}
                )
                result = json.loads(text_of(answer))
                found = next(f for f in result["findings"] if f["category"] == "definition")
                counted.append(semantic_of(found).get("references"))

    with pytest.MonkeyPatch.context() as env:
        env.setenv("CQ_SEMANTIC_WAIT_MS", ANSWER_BUDGET["CQ_SEMANTIC_WAIT_MS"])
        anyio.run(scenario)
    assert counted == [uses]


def test_errors_are_reported_in_a_tree_whose_path_needs_escaping(tmp_path: Path) -> None:
    """Pyrefly names files in its diagnostics with a literal "+" where ``Path.as_uri`` has
    %2B: a tree under such a path still gets its type errors."""
    files = {"pkg/__init__.py": "", "pkg/graph.py": GRAPH, "pkg/other.py": OTHER, "pkg/use.py": USE}
    root = write_tree(tmp_path / "Lightning-AI+lightning", files)
    result = search_json(root, "build_graph_product", env=ANSWER_BUDGET)
    bad = next(i for i, line in enumerate(USE.split("\n"), 1) if "total: int =" in line)
    facts = {f["line"]: semantic_of(f) for f in result["findings"] if f["file"] == "pkg/use.py"}
    assert facts[bad]["status"] == "applied"
    assert any("bad-assignment" in d for d in facts[bad]["diagnostics"])
