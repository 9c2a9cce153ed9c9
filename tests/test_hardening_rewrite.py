"""The LLM rewriter under hostile configuration and hostile servers (issue 13), against real
HTTP servers on loopback (``llm_server.py``) and the real ``cq`` CLI.

A searched repository may not choose where the question, the repository's names and the API
key go; a server may not hold a search past the configured timeout, nor feed it an answer
larger or deeper than any real answer.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import run_cq
from llm_server import ModelServer
from rewrite_fixture import graph_repo

from cq.model import SearchRequest
from cq.pipeline import run_search

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

QUESTION = "how are edges inserted into the graph?"


@pytest.fixture(autouse=True)
def _patient_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole exchange with a model may take its longest (default 5 s), so what a test
    sees is what the server did, not the machine's load (beside CPU burners a loopback
    endpoint's thread did not answer a CLI in 5 s); the trickling server's test sets its own
    deadline, which it is about."""
    monkeypatch.setenv("CQ_LLM_TIMEOUT", "120")


def user_config(tmp_path: Path, text: str) -> dict[str, str]:
    """Write the user's own config file; the environment that makes cq read it."""
    path = tmp_path / "xdg" / "cq" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}


REPOSITORY_CONFIGS = [
    (".cq.toml", "[rewrite]\n"),
    (".cq.toml", "[tool.cq.rewrite]\n"),
    ("pyproject.toml", "[tool.cq.rewrite]\n"),
]


@pytest.mark.parametrize(("name", "table"), REPOSITORY_CONFIGS)
def test_a_repository_config_cannot_point_the_key_at_its_own_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, table: str
) -> None:
    root = graph_repo(tmp_path / "repo")
    monkeypatch.delenv("CQ_LLM_URL")  # only the user's config file names the endpoint
    with ModelServer() as planted, ModelServer() as users:
        (root / name).write_text(
            f'{table}url = "{planted.url}"\nmodel = "repo-model"\ntimeout = 60\nenabled = true\n'
        )
        env = user_config(tmp_path, f'[rewrite]\nurl = "{users.url}"\nmodel = "user-model"\n')
        env["CQ_LLM_API_KEY"] = "sk-test-secret"
        run = run_cq("search", QUESTION, "--root", str(root), "--format", "json", env=env)
    assert run.returncode == 0, run.stderr
    assert planted.requests == []
    assert [r.headers.get("authorization") for r in users.requests] == ["Bearer sk-test-secret"]
    assert users.requests[0].body["model"] == "user-model"
    rewrite = run.json()["summary"]["rewrite"]
    assert rewrite["rewriter"] == "llm:ollama:user-model"
    assert rewrite["identifiers"][0] == "insert_edge"


def test_a_repository_can_still_switch_the_llm_off_for_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = graph_repo(tmp_path / "repo")
    with ModelServer() as users:
        monkeypatch.setenv("CQ_LLM_URL", users.url)
        (root / ".cq.toml").write_text("[rewrite]\nenabled = false\n")
        off = run_search(SearchRequest(query=QUESTION, root=str(root))).summary.rewrite
        (root / ".cq.toml").write_text("[rewrite]\nenabled = true\n")  # cannot override the user
        for key, value in user_config(tmp_path, "[rewrite]\nenabled = false\n").items():
            monkeypatch.setenv(key, value)
        still_off = run_search(SearchRequest(query=QUESTION, root=str(root))).summary.rewrite
    assert users.requests == []
    assert off is not None and off.fallback_reason == "llm disabled by config"
    assert still_off is not None and still_off.rewriter == "offline"


@pytest.mark.parametrize(
    "make",
    [
        lambda path: path.write_text("[tool.cq]\nrewrite = " + "[" * 50_000 + "]" * 50_000),
        lambda path: path.write_text("[rewrite]\nenabled = false\n" + "#" * (2 << 20)),
        lambda path: os.mkfifo(path),
        lambda path: path.symlink_to("/dev/zero"),
    ],
    ids=["nested", "huge", "fifo", "device"],
)
def test_a_hostile_repository_config_file_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make
) -> None:
    """Nested past the parser's recursion, larger than any config, a FIFO that a plain read
    waits on forever, a device: none of them stops the search, none can disable the LLM."""
    root = graph_repo(tmp_path / "repo")
    with ModelServer() as users:
        monkeypatch.setenv("CQ_LLM_URL", users.url)
        make(root / ".cq.toml")
        run = run_cq("search", QUESTION, "--root", str(root), "--format", "json")
    assert run.returncode == 0, run.stderr
    assert run.json()["summary"]["rewrite"]["rewriter"] == "llm:ollama:qwen2.5:3b"
    assert len(users.requests) == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[rewrite\nurl = 1\n", "invalid user config"),
        ('[rewrite]\nurl = "http://127.0.0.1:9"\napi_key = "x"\n', "rewrite.api_key: unknown key"),
        ("[rewrite]\ntimeout = 0\n", "rewrite.timeout must be in (0, 120]"),
        ("[rewrite]\nmodel = " + "[" * 5000 + "]" * 5000, "invalid user config"),
    ],
)
def test_a_bad_user_config_is_one_line_and_exit_2(tmp_path: Path, text: str, message: str) -> None:
    env = user_config(tmp_path, text)
    run = run_cq("search", QUESTION, "--root", str(graph_repo(tmp_path / "repo")), env=env)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("cq: ")
    assert message in run.stderr and "internal error" not in run.stderr


@pytest.mark.parametrize("behaviour", ["trickle-body", "trickle-headers"])
def test_a_trickling_server_cannot_hold_a_search_past_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, behaviour: str
) -> None:
    """A byte every 0.3 s never trips httpx's per-read timeout: the answer would arrive,
    complete and usable, after about a minute. One deadline for the whole exchange ends it
    at the configured seconds and the offline rewriter answers. (The deadline runs from the
    rewrite's start: at 1 s a loaded machine spent it before the request was sent, and no
    connection was there to cut.)"""
    root = graph_repo(tmp_path)
    with ModelServer(behaviour) as server:
        monkeypatch.setenv("CQ_LLM_URL", server.url)
        monkeypatch.setenv("CQ_LLM_TIMEOUT", "5")
        rewrite = run_search(SearchRequest(query=QUESTION, root=str(root))).summary.rewrite
        assert server.hung_up.wait(120)  # cq closed the connection mid-answer
    assert len(server.requests) == 1
    assert rewrite is not None and rewrite.rewriter == "offline"
    assert rewrite.fallback_reason is not None and "timed out after 5 s" in rewrite.fallback_reason


@pytest.mark.parametrize(
    ("behaviour", "content", "reason"),
    [
        ("huge", None, "answer longer than 1048576 bytes"),
        ("huge-chunked", None, "answer longer than 1048576 bytes"),
        ("deep-body", None, "response nested deeper than 32 levels"),
        ("answer", "[" * 100_000 + "]" * 100_000, "model answer nested deeper than 32 levels"),
        ("answer", '{"identifiers": ' + "[" * 40 + "]" * 40 + "}", "nested deeper than 32"),
    ],
)
def test_oversized_or_deep_answers_fall_back_to_the_offline_rewriter(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    behaviour: str,
    content: str | None,
    reason: str,
) -> None:
    root = graph_repo(tmp_path)
    with ModelServer(behaviour, content) as server:
        monkeypatch.setenv("CQ_LLM_URL", server.url)
        result = run_search(SearchRequest(query=QUESTION, root=str(root)))
    rewrite = result.summary.rewrite
    assert len(server.requests) == 1
    assert rewrite is not None and rewrite.rewriter == "offline"
    assert rewrite.fallback_reason is not None and reason in rewrite.fallback_reason
    first = next(f for f in result.findings if f.category == "definition")
    assert (first.file, first.text) == ("graphstore/store.py", "insert_edge")


def test_an_answer_nested_two_levels_is_still_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    content = json.dumps({"identifiers": ["insert_edge"], "literals": [], "focus": "all"})
    with ModelServer("answer", "```json\n" + content + "\n```") as server:
        monkeypatch.setenv("CQ_LLM_URL", server.url)
        rewrite = run_search(SearchRequest(query=QUESTION, root=str(graph_repo(tmp_path))))
    summary = rewrite.summary.rewrite
    assert summary is not None and summary.rewriter == "llm:ollama:qwen2.5:3b"
    assert summary.identifiers[0] == "insert_edge"


def test_a_url_with_a_bad_port_falls_back_instead_of_crashing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CQ_LLM_URL", "http://127.0.0.1:99999")
    rewrite = run_search(SearchRequest(query=QUESTION, root=str(graph_repo(tmp_path))))
    summary = rewrite.summary.rewrite
    assert summary is not None and summary.rewriter == "offline"
    assert summary.fallback_reason is not None and "unusable URL" in summary.fallback_reason
