"""What the Pyrefly stage costs a search, against the real ``pyrefly lsp``: a tree whose fresh
server was not ready within the budget is not asked again by a one-shot search (skipped, with
the reason in JSON and markdown), while a long-lived process (``cq mcp``) always asks.

The tree is that of ``test_semantic.py``; the helpers are in ``semantic_cli.py``.
"""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path

import anyio
import pytest

from cq.model import SearchRequest
from cq.pipeline import run_search
from cq.semantic.pool import pool
from tests.conftest import run_cq, write_tree
from tests.semantic_cli import (
    ANSWER_BUDGET,
    search_json,
    semantic_of,
    semantic_on,  # noqa: F401  (autouse: applies by being imported)
)
from tests.test_semantic import GRAPH, NO_ENRICH_CLOCK, OTHER, USE, _on_server_start

CODE = {"definition", "callsite", "import", "from_import", "reference", "assignment", "annotation"}
BUDGET_MS = 400
SHORT = {"CQ_SEMANTIC_BUDGET_MS": str(BUDGET_MS), **NO_ENRICH_CLOCK}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    files = {"pkg/__init__.py": "", "pkg/graph.py": GRAPH, "pkg/other.py": OTHER, "pkg/use.py": USE}
    return write_tree(tmp_path / "repo", files)


def _code_facts(result: dict) -> list[dict]:
    return [semantic_of(f) for f in result["findings"] if f["category"] in CODE]


def _not_ready_once(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A search whose fresh server hangs (SIGSTOP once it is up): every answer is cut by the
    budget, so the tree is remembered as not ready within it. The server is then stopped, as
    a one-shot ``cq search`` stops it at exit."""
    monkeypatch.setenv("CQ_SEMANTIC_BUDGET_MS", str(BUDGET_MS))
    pids: list[int] = []

    def hang(pid: int) -> None:
        pids.append(pid)
        os.kill(pid, signal.SIGSTOP)

    watcher = _on_server_start(root, hang)
    try:
        result = run_search(SearchRequest(query="build_graph_product", root=str(root)))
        watcher.join(60)
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
        pool().stop_all()
    assert pids, "the search did not start a server"
    facts = [s for s in map(_facts_of, result.findings) if s]
    assert all("no answer in time" in s.reason for s in facts)
    failed = sum(1 for s in facts if s.status == "failed")
    assert result.summary.telemetry["semantic.failed"] == {
        f"no answer within its {BUDGET_MS} ms": failed
    }


def _facts_of(finding):  # type: ignore[no-untyped-def]
    semantic = finding.enrichment.semantic
    return semantic if semantic is not None and finding.category in CODE else None


def test_a_tree_not_ready_within_the_budget_is_skipped_by_the_next_search(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _not_ready_once(repo, monkeypatch)
    skipped = search_json(repo, "build_graph_product", env=SHORT)
    facts = _code_facts(skipped)
    reason = (
        f"not asked: Pyrefly was not ready within {BUDGET_MS} ms in an earlier search of this tree"
    )
    assert facts and all(s == {"status": "skipped", "reason": reason} for s in facts)
    assert skipped["summary"]["telemetry"]["semantic.skipped"] == {reason: len(facts)}
    assert "semantic.asked" not in skipped["run"]["counters"]  # no server was asked
    again = search_json(repo, "build_graph_product", env=SHORT)
    assert again | {"run": None} == skipped | {"run": None}  # identical runs, identical output
    markdown = run_cq("search", "build_graph_product", "--root", str(repo), "-v", env=SHORT)
    assert f"semantic.skipped {reason} {len(facts)}" in markdown.stdout

    asked = search_json(repo, "build_graph_product", env=ANSWER_BUDGET)  # another budget: asked
    assert {s["status"] for s in _code_facts(asked)} == {"applied"}


def test_an_edit_asks_a_skipped_tree_again(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _not_ready_once(repo, monkeypatch)
    (repo / "pkg" / "extra.py").write_text("VALUE = 1\n")
    edited = search_json(repo, "build_graph_product", env=SHORT)
    assert "skipped" not in {s["status"] for s in _code_facts(edited)}
    assert edited["run"]["counters"]["semantic.asked"] > 0


def test_mcp_asks_a_tree_a_one_shot_search_skips(
    repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.test_mcp_server import session, text_of

    _not_ready_once(repo, monkeypatch)
    assert (
        _code_facts(search_json(repo, "build_graph_product", env=SHORT))[0]["status"] == "skipped"
    )
    statuses: set[str] = set()

    async def scenario() -> None:
        with (tmp_path / "server.err").open("w") as errlog:
            async with session(repo, errlog) as client:
                answer = await client.call_tool(
                    "search", {"query": "build_graph_product", "format": "json"}
                )
                assert not answer.is_error
                result = json.loads(text_of(answer))
                statuses.update(s["status"] for s in _code_facts(result))

    anyio.run(scenario)
    assert statuses and "skipped" not in statuses  # the warm process asked its server


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
        env.setenv("CQ_SEMANTIC_BUDGET_MS", ANSWER_BUDGET["CQ_SEMANTIC_BUDGET_MS"])
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
