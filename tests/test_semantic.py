"""The semantic stage against the real ``pyrefly lsp`` on small fixture trees.

CLI tests run ``python -m cq`` as a subprocess; the kill / stop tests run the pipeline in this
process, so they can find the server the search started and kill or stop it mid-search. The
budget is generous where answers are asserted (the machine is shared), small where failure is.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cq.model import SearchRequest
from cq.pipeline import run_search
from cq.semantic.pool import pool
from tests.conftest import run_cq, write_tree
from tests.semantic_cli import (
    ANSWER_BUDGET,
    line_of,
    search_json,
    semantic_of,
    semantic_on,  # noqa: F401  (autouse: applies by being imported)
)

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

GRAPH = """\
class Client:
    def send(self, data: bytes) -> int:
        return len(data)


def build_graph_product(left: int, right: int) -> list[int]:
    return [left * right]
"""
OTHER = """\
class Other:
    def __init__(self) -> None:
        self.sent = 0

    def send(self, text: str) -> None:
        print(text)
"""
USE = """\
from pkg.graph import Client, build_graph_product
from pkg.other import Other

values = build_graph_product(2, 3)
Client().send(b"payload")
Other().send("text")


def run() -> int:
    total: int = build_graph_product(4, 5)
    return total
"""
# Reference counts need Pyrefly's workspace index, which only a warm server (cq mcp) builds
# by default; a one-shot search builds it when told to (``[semantic] index``).
INDEXED = {**ANSWER_BUDGET, "CQ_SEMANTIC_INDEX": "always"}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_tree(
        tmp_path / "repo",
        {
            "pkg/__init__.py": "",
            "pkg/graph.py": GRAPH,
            "pkg/other.py": OTHER,
            "pkg/use.py": USE,
        },
    )


def test_callsite_resolves_to_its_definition(tree: Path) -> None:
    result = search_json(tree, "build_graph_product", env=ANSWER_BUDGET)
    findings = result["findings"]
    by_place = {(f["file"], f["line"]): f for f in findings}
    calls = [f for f in findings if f["category"] == "callsite"]
    assert calls
    def_line = line_of(GRAPH, "def build_graph_product")
    for call in calls:
        semantic = semantic_of(call)
        assert semantic["status"] == "applied", semantic
        assert semantic["definition"] == {
            "file": "pkg/graph.py",
            "line": def_line,
            "col": 4,
            "via": "pyrefly",
        }
        assert by_place[("pkg/graph.py", def_line)]["category"] == "definition"
        assert semantic["type"].startswith("def build_graph_product(left: int, right: int)")
        assert call["enrichment"]["stages"]["semantic"] == "applied"
    assert result["summary"]["telemetry"]["semantic"]["applied"] == len(findings)


def test_a_file_name_that_is_not_utf8_is_answered_under_its_own_name(tmp_path: Path) -> None:
    odd = "dir_\udce9/bad_\udcff.py"
    (tmp_path / "dir_\udce9").mkdir()
    (tmp_path / odd).write_bytes(b"def weird_handler() -> int:\n    return weird_handler()\n")
    for _ in range(2):  # the second search as the first: the answers are not cached, no crash
        findings = search_json(tmp_path, "weird_handler", env=ANSWER_BUDGET)["findings"]
        assert {f["file"] for f in findings} == {odd}
        assert {semantic_of(f)["status"] for f in findings} == {"applied"}  # its diagnostics
        (call,) = [f for f in findings if f["category"] == "callsite"]
        assert semantic_of(call)["definition"]["file"] == odd  # not a U+FFFD name


def test_a_root_whose_name_is_not_utf8_is_answered(tree: Path) -> None:
    odd = tree.rename(tree.with_name("repo_\udce9"))  # Pyrefly is told of it, by JSON
    run = run_cq("search", "build_graph_product", "--root", str(odd), "--format", "json")
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    calls = [f for f in run.json()["findings"] if f["category"] == "callsite"]
    assert calls and all(semantic_of(f)["status"] == "applied" for f in calls)
    assert {semantic_of(f)["definition"]["file"] for f in calls} == {"pkg/graph.py"}


def test_a_cache_dir_whose_name_is_not_utf8_fails_the_stage_in_words(
    tree: Path, tmp_path: Path
) -> None:
    cache = str(tmp_path / "cache_\udce9")  # Pyrefly's scratch dir, named to it by JSON
    run = run_cq(
        "search",
        "build_graph_product",
        "--root",
        str(tree),
        "--format",
        "json",
        env={**ANSWER_BUDGET, "CQ_CACHE_DIR": cache},
    )
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    reasons = {semantic_of(f)["reason"] for f in run.json()["findings"]}
    assert reasons == {"initialize failed: cq's cache dir has a name that is not UTF-8"}


def test_definition_counts_its_references_in_the_root(tree: Path) -> None:
    result = search_json(tree, "build_graph_product", env=INDEXED)
    definition = next(f for f in result["findings"] if f["category"] == "definition")
    uses = sum(
        len(re.findall(r"\bbuild_graph_product\b", (tree / "pkg" / name).read_text()))
        for name in ("use.py", "other.py")
    )
    assert semantic_of(definition)["references"] == uses


def test_type_error_is_reported_on_its_line_only(tree: Path) -> None:
    result = search_json(tree, "build_graph_product", env=ANSWER_BUDGET)
    bad_line = line_of(USE, "total: int = build_graph_product")
    good_line = line_of(USE, "values = build_graph_product")
    by_line = {f["line"]: semantic_of(f) for f in result["findings"] if f["file"] == "pkg/use.py"}
    assert any("bad-assignment" in d for d in by_line[bad_line]["diagnostics"])
    assert "diagnostics" not in by_line[good_line]


def test_markdown_names_resolved_targets_and_reference_counts(tree: Path) -> None:
    run = run_cq("search", "build_graph_product", "--root", str(tree), env=INDEXED)
    def_line = line_of(GRAPH, "def build_graph_product")
    uses = len(re.findall(r"\bbuild_graph_product\b", USE))
    # the uses name the definition's place; its signature is printed once (the Answer), not
    # again as Pyrefly's type on every resolved use
    assert f"→ `pkg/graph.py:{def_line}`" in run.stdout
    assert f"→ `pkg/graph.py:{def_line}` `def" not in run.stdout
    # every finding is in Top Contexts: the definition's bullet counts its references
    definition = rf"^- `pkg/graph.py:{def_line}:4` definition · {uses} references$"
    assert re.search(definition, run.stdout, re.M), run.stdout
    answer = run.stdout.split("\n\n")[1]
    assert "def build_graph_product(" in answer and "type `def" not in answer


def test_dotted_query_ranks_uses_of_that_definition_first(tree: Path) -> None:
    """``Client.send`` is written nowhere: its definition (``def send`` inside ``Client``)
    leads, the call resolved to it follows, the call resolved to ``Other.send`` comes last."""
    result = search_json(tree, "Client.send", env=ANSWER_BUDGET)
    findings = result["findings"]
    send_line = line_of(GRAPH, "def send")
    place = {"file": "pkg/graph.py", "line": send_line, "col": 8, "via": "pyrefly"}
    assert (findings[0]["file"], findings[0]["line"]) == ("pkg/graph.py", send_line)
    mine = [i for i, f in enumerate(findings) if (semantic_of(f) or {}).get("definition") == place]
    others = [
        i
        for i, f in enumerate(findings)
        if f["category"] == "callsite"
        and f["text"].endswith("send")
        and (semantic_of(f) or {}).get("definition") not in (None, place)
    ]
    assert mine == [1] and others == [len(findings) - 1]
    target = result["summary"]["telemetry"]["semantic.target"]
    assert (target["resolved_to_target"], target["resolved_elsewhere"]) == (1, 1)
    md = run_cq("search", "Client.send", "--root", str(tree), env=ANSWER_BUDGET).stdout
    answer = md.split("\n\n")[1]
    assert answer.startswith(
        "**Answer:** `send` — `def send(self, data: bytes) -> int:` defined at"
        f" `pkg/graph.py:{send_line}:8`"
    )
    assert (
        f"Pyrefly: 1 of 2 shown uses of `send` resolve to `pkg/graph.py:{send_line}`"
        " `Client.send`, 1 to other definitions" in answer
    ), answer


def test_callers_question_leads_with_resolved_callsites(tree: Path) -> None:
    run = run_cq("search", "who calls build_graph_product", "--root", str(tree), env=ANSWER_BUDGET)
    answer = run.stdout.split("\n\n")[1]
    assert answer.startswith("**Answer:** 2 shown callsites of `build_graph_product`"), answer
    result = search_json(tree, "who calls build_graph_product", env=ANSWER_BUDGET)
    first = result["findings"][0]
    assert first["category"] == "callsite"
    assert semantic_of(first)["definition"]["file"] == "pkg/graph.py"


def _without_semantic(result: dict, *, grouping: bool = False) -> dict:
    """The result with every semantic field and the volatile run facts removed (and, with
    ``grouping``, Top Contexts, which groups resolved callsites by their definition)."""
    result = json.loads(json.dumps(result))
    result.pop("run")
    result["summary"].pop("semantic")
    if grouping:
        result["sections"] = [s for s in result["sections"] if s["type"] != "top_contexts"]
    for key in [k for k in result["summary"]["telemetry"] if k.startswith("semantic")]:
        del result["summary"]["telemetry"][key]
    for finding in result["findings"]:
        enrichment = finding.get("enrichment") or {}
        enrichment.pop("semantic", None)
        enrichment.get("stages", {}).pop("semantic", None)
    return result


def test_no_semantic_leaves_everything_else_identical(tree: Path) -> None:
    on = search_json(tree, "build_graph_product", env=ANSWER_BUDGET)
    off = run_cq(
        *("search", "build_graph_product", "--root", str(tree), "--format", "json"),
        "--no-semantic",
    )
    assert all(semantic_of(f) is None for f in off.json()["findings"])
    assert _without_semantic(on, grouping=True) == _without_semantic(off.json(), grouping=True)
    resolved = next(s for s in on["sections"] if s["type"] == "top_contexts")["groups"]
    plain = next(s for s in off.json()["sections"] if s["type"] == "top_contexts")["groups"]
    assert any(g.get("resolves_to") for g in resolved)
    assert not any("resolves_to" in g for g in plain)
    by_env = run_cq(
        "search",
        *("build_graph_product", "--root", str(tree), "--format", "json"),
        env={"CQ_SEMANTIC": "0"},
    )
    assert json.loads(by_env.stdout) | {"run": None} == off.json() | {"run": None}


def test_profile_switch_turns_the_stage_off(tree: Path) -> None:
    profile = tree / "quiet.toml"  # a profile file must lie inside the root
    profile.write_text("max_files = 100\n[semantic]\nenabled = false\n")
    result = search_json(tree, "build_graph_product", "--profile", str(profile))
    assert all(semantic_of(f) is None for f in result["findings"])
    assert "semantic" not in result["summary"]["telemetry"]


def test_missing_pyrefly_fails_open(tree: Path) -> None:
    result = search_json(tree, "build_graph_product", env={"CQ_PYREFLY": str(tree / "nope")})
    statuses = {semantic_of(f)["status"] for f in result["findings"]}
    assert statuses == {"failed"}
    assert semantic_of(result["findings"][0])["reason"] == "pyrefly not installed"
    off = run_cq(
        *("search", "build_graph_product", "--root", str(tree), "--format", "json"),
        "--no-semantic",
    )
    assert _without_semantic(result) == _without_semantic(off.json())


def test_searched_tree_is_left_untouched(tree: Path) -> None:
    before = sorted((str(p), p.stat().st_mtime_ns) for p in tree.rglob("*"))
    search_json(tree, "build_graph_product", env=ANSWER_BUDGET)
    assert sorted((str(p), p.stat().st_mtime_ns) for p in tree.rglob("*")) == before


def _request(root: Path, query: str) -> SearchRequest:
    return SearchRequest(query=query, root=str(root), use_cache=False)


def _on_server_start(root: Path, action) -> threading.Thread:  # type: ignore[no-untyped-def]
    """Run ``action(pid)`` as soon as the search has started the root's server."""

    def watch() -> None:
        deadline = time.monotonic() + 300  # a hang bound, generous on a busy machine
        while time.monotonic() < deadline:
            server = pool().running(str(root))
            if server is not None and server.process is not None:
                server.initialized.wait(30)
                action(server.process.pid)
                return
            time.sleep(0.005)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("how", ["killed", "stopped"])
def test_dead_or_hung_server_fails_within_budget(
    tree: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    budget_ms = 1000  # a search told to wait waits no longer
    monkeypatch.setenv("CQ_SEMANTIC_WAIT_MS", str(budget_ms))
    pids: list[int] = []

    def act(pid: int) -> None:
        pids.append(pid)
        os.kill(pid, signal.SIGKILL if how == "killed" else signal.SIGSTOP)

    watcher = _on_server_start(tree, act)
    try:
        result = run_search(_request(tree, "build_graph_product"))
        watcher.join(60)
    finally:
        for pid in pids:
            if how == "stopped":
                os.kill(pid, signal.SIGCONT)
        pool().stop_all()
    assert pids, "the search did not start a server"
    statuses = {f.enrichment.semantic.status for f in result.findings}
    assert statuses == {"failed"}
    # Not a timing test: a search that ignored the budget would wait for the stopped server
    # for good (and the killed one's restart); the bound only tells the budget from that, with
    # room for a loaded machine (under nice beside two CPU burners it took 1.57 s).
    assert result.run.timings_ms["semantic"] <= 10 * budget_ms
    off = run_search(msgspec_replace(_request(tree, "build_graph_product"), semantic=False))
    assert [f.enrichment.signature for f in result.findings] == [
        f.enrichment.signature for f in off.findings
    ]


def msgspec_replace(request: SearchRequest, **changes: object) -> SearchRequest:
    import msgspec

    return msgspec.structs.replace(request, **changes)


def test_rust_only_search_never_starts_a_server(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "rs", {"src/lib.rs": "pub fn build() -> u8 { 1 }\n"})
    result = run_search(_request(root, "build"))
    assert result.findings
    assert pool().running(str(root)) is None


def _pyrefly_children(scratch: Path) -> list[int]:
    """Processes whose working directory is this test cache's Pyrefly scratch dir."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if Path(os.readlink(entry / "cwd")) == scratch:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("ending", ["exit", "sigterm"])
def test_server_is_stopped_when_cq_ends(tree: Path, _isolated_cache: Path, ending: str) -> None:
    script = (
        "import sys, time\n"
        "from cq.model import SearchRequest\n"
        "from cq.pipeline import run_search\n"
        f"run_search(SearchRequest(query='build_graph_product', root={str(tree)!r}))\n"
        "print('searched', flush=True)\n"
        "time.sleep(0 if sys.argv[1] == 'exit' else 60)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script, ending], stdout=subprocess.PIPE, env=os.environ.copy()
    )
    assert proc.stdout is not None and proc.stdout.readline() == b"searched\n"
    scratch = _isolated_cache / "pyrefly-tmp"
    if ending == "sigterm":
        assert _pyrefly_children(scratch), "no server was running during the search"
        proc.send_signal(signal.SIGTERM)
    proc.wait(300)
    deadline = time.monotonic() + 120  # a leaked server stays: a hang bound, not a clock
    while _pyrefly_children(scratch) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _pyrefly_children(scratch) == []


def test_mcp_keeps_one_warm_server_and_stops_it(
    tree: Path, tmp_path: Path, _isolated_cache: Path
) -> None:
    import anyio

    from tests.test_mcp_server import session, text_of

    scratch = _isolated_cache / "pyrefly-tmp"
    seen: list[list[int]] = []

    async def scenario() -> None:
        with (tmp_path / "server.err").open("w") as errlog:
            async with session(tree, errlog) as client:
                for query in ("build_graph_product", "Client.send"):
                    answer = await client.call_tool("search", {"query": query, "format": "json"})
                    assert not answer.is_error
                    result = json.loads(text_of(answer))
                    assert any(semantic_of(f) for f in result["findings"])
                    seen.append(_pyrefly_children(scratch))

    anyio.run(scenario)
    assert len(seen[0]) == 1 and seen[1] == seen[0]  # the same process served both searches
    deadline = time.monotonic() + 120  # a leaked server stays: a hang bound, not a clock
    while _pyrefly_children(scratch) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _pyrefly_children(scratch) == []


def test_where_is_it_called_after_a_follow_up_leads_with_callsites(tree: Path) -> None:
    first = run_cq("search", "build_graph_product", "--root", str(tree), "--follow-up")
    assert first.returncode == 0, first.stderr
    then = run_cq("search", "where is it called?", "--root", str(tree), "--follow-up")
    answer = then.stdout.split("\n\n")[1]
    assert answer.startswith("**Answer:** 2 shown callsites of `build_graph_product`"), answer


def test_a_constructor_call_resolves_to_its_class(tree: Path) -> None:
    result = search_json(tree, "Other", env=ANSWER_BUDGET)
    call = next(f for f in result["findings"] if f["category"] == "callsite")
    assert semantic_of(call)["definition"] == {
        "file": "pkg/other.py",
        "line": 1,
        "col": 6,
        "via": "pyrefly",
    }


def _resolved(result: dict) -> dict[tuple[str, int], dict | None]:
    return {
        (f["file"], f["line"]): (semantic_of(f) or {}).get("definition") for f in result["findings"]
    }


def test_a_repeated_search_is_answered_from_the_cache_without_a_server(tree: Path) -> None:
    request = SearchRequest(query="build_graph_product", root=str(tree))
    first = run_search(request)
    pool().stop_all()
    again = run_search(request)
    assert pool().running(str(tree)) is None  # every answer known: Pyrefly was not started
    code = sum(1 for f in again.findings if f.enrichment.semantic.status != "skipped")
    assert first.run.counters.semantic_asked == code
    assert (again.run.counters.semantic_cached, again.run.counters.semantic_asked) == (code, 0)
    assert [f.enrichment for f in again.findings] == [f.enrichment for f in first.findings]
    assert again.summary == first.summary


def test_an_edit_anywhere_in_the_tree_is_asked_again(tree: Path) -> None:
    before = search_json(tree, "build_graph_product", env=ANSWER_BUDGET)
    line = line_of(GRAPH, "def build_graph_product")
    calls = [k for k, d in _resolved(before).items() if k[0] == "pkg/use.py" and d]
    assert calls and all(_resolved(before)[k]["line"] == line for k in calls)
    (tree / "pkg" / "graph.py").write_text("import os\n\n" + GRAPH)  # the calls' file unchanged
    after = search_json(tree, "build_graph_product", env=ANSWER_BUDGET)
    assert all(
        _resolved(after)[k]
        == {"file": "pkg/graph.py", "line": line + 2, "col": 4, "via": "pyrefly"}
        for k in calls
    )
    assert after["run"]["counters"]["semantic.asked"] > 0


def test_an_edit_of_files_no_answer_names_keeps_every_answer(tree: Path) -> None:
    """An agent edits a file between searches: answers that name only other files hold."""
    before = search_json(tree, "build_graph_product", env=ANSWER_BUDGET)
    (tree / "pkg" / "other.py").write_text(OTHER + "\n\nLIMIT = 2\n")
    (tree / "pkg" / "extra.py").write_text("VALUE = 1\n")
    after = search_json(tree, "build_graph_product", env=ANSWER_BUDGET)
    assert "semantic.asked" not in after["run"]["counters"]  # nothing asked again
    assert [semantic_of(f) for f in after["findings"]] == [
        semantic_of(f) for f in before["findings"]
    ]


def test_answers_cut_by_the_budget_are_not_kept(tree: Path) -> None:
    cut = search_json(tree, "build_graph_product", "--semantic-wait", "1")
    statuses = {semantic_of(f)["status"] for f in cut["findings"]}
    assert statuses <= {"failed", "degraded"}, statuses
    assert all("time budget" in semantic_of(f)["reason"] for f in cut["findings"])
    full = search_json(tree, "build_graph_product", env=ANSWER_BUDGET)
    assert {semantic_of(f)["status"] for f in full["findings"]} == {"applied"}
    assert "semantic.cached" not in full["run"]["counters"]


def test_a_call_typed_from_typeshed_resolves_to_the_roots_source_of_it(tmp_path: Path) -> None:
    """A root holding a stdlib module's source (here ``abc``, as the stdlib itself does):
    Pyrefly types ``Sized.register`` from its bundled stub but answers no definition."""
    root = write_tree(
        tmp_path / "lib",
        {
            "abc.py": "class ABCMeta(type):\n"
            "    def register(cls, subclass):\n        return subclass\n",
            "use.py": "from abc import ABCMeta\n\n\nclass Sized(metaclass=ABCMeta):\n"
            "    pass\n\n\nSized.register(list)\n",
        },
    )
    result = search_json(root, "register", env=ANSWER_BUDGET)
    call = next(f for f in result["findings"] if f["category"] == "callsite")
    assert semantic_of(call)["type"].startswith("def register")
    assert semantic_of(call)["definition"] == {"module": "abc.ABCMeta.register", "via": "pyrefly"}
    dotted = search_json(root, "ABCMeta.register", env=ANSWER_BUDGET)
    assert dotted["summary"]["telemetry"]["semantic.target"]["resolved_to_target"] == 1
    lead = [(f["file"], f["category"]) for f in dotted["findings"][:2]]
    assert sorted(lead) == [("abc.py", "definition"), ("use.py", "callsite")]


def test_files_closed_past_the_open_file_cap_are_answered_alike_when_reopened(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cq.semantic import server

    monkeypatch.setattr(server, "MAX_OPEN_FILES", 1)  # every new file closes the last one
    monkeypatch.setenv("CQ_SEMANTIC_CACHE", "0")
    request = SearchRequest(query="build_graph_product", root=str(tree))
    try:
        first = run_search(request)
        run_search(msgspec_replace(request, query="Other"))
        again = run_search(request)
        opened = pool().running(str(tree))._versions  # type: ignore[union-attr]
    finally:
        pool().stop_all()
    facts = [f.enrichment.semantic for f in first.findings]
    assert {f.status for f in facts} == {"applied"}
    assert any(f.diagnostics for f in facts)
    assert [f.enrichment.semantic for f in again.findings] == facts
    # only this search's files stayed open; graph.py was closed by "Other" and opened again
    assert sorted(Path(p).name for p in opened) == ["graph.py", "use.py"]
    assert opened[str(tree / "pkg" / "graph.py")][0] == 2


def test_pyrefly_runs_below_the_searchs_priority(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pyrefly checks the tree for answers later searches read; on a busy machine it must not
    take the CPU a search is waiting for, so it runs niced below the search's process."""
    # the search waits for its answers however long the niced Pyrefly takes beside a loaded
    # machine's other work (5 s failed under ``nice -n 10`` with CPU burners beside it)
    monkeypatch.setenv("CQ_SEMANTIC_WAIT_MS", "600000")
    priorities: list[int] = []
    watcher = _on_server_start(
        tree, lambda pid: priorities.append(os.getpriority(os.PRIO_PROCESS, pid))
    )
    try:
        result = run_search(_request(tree, "build_graph_product"))
        watcher.join(60)
    finally:
        pool().stop_all()
    assert priorities, "the search did not start Pyrefly"
    # ten steps below the search, as far as niceness goes (19): under ``nice -n 10`` the
    # search runs at 10 and Pyrefly at 19, not 20
    assert priorities[0] == min(os.getpriority(os.PRIO_PROCESS, 0) + 10, 19)
    # still answered: a search that waits gets its answers
    assert "applied" in {f.enrichment.semantic.status for f in result.findings}
