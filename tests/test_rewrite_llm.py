"""The LLM rewriter against a real HTTP server on loopback, speaking Ollama and OpenAI APIs.

Every behaviour (right answer, slow, HTTP 500, fenced JSON, invalid JSON, hostile patterns)
must end in a correct search, and the summary must say which rewriter ran and why.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cq
from rewrite_fixture import graph_repo

from cq.model import SearchRequest, SearchResult
from cq.pipeline import run_search

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

QUESTION = "how are edges inserted into the graph?"
GOOD = {"identifiers": ["insert_edge", "GraphStore"], "literals": [], "focus": "implementation"}
# The model's time limit. A loaded machine (six test runs on two cores) can take seconds to
# answer over loopback, so a model that answers gets far more than it needs; the test of a
# slow model sets 1 s and the server holds its answer until the test ends (``SLOW`` only
# ends a hang), so either outcome is decided by what the model does, never by the machine's
# load.
TIMEOUT = "60"
SLOW = 600.0


class FakeModel:
    """What the server answers next, and every request body it received."""

    def __init__(self) -> None:
        self.behaviour = "good"
        self.answer: Any = GOOD
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.released = threading.Event()  # the test is over: a slow answer may go
        self.answered = threading.Event()  # a slow answer went


def _handler(model: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            model.requests.append((self.path, body))
            if model.behaviour == "slow":
                model.released.wait(SLOW)  # past the 1 s the whole exchange may take
                model.answered.set()
            if model.behaviour == "error":
                self._send(500, b'{"error": "model crashed"}')
                return
            content = model.answer if isinstance(model.answer, str) else json.dumps(model.answer)
            if model.behaviour == "fenced":
                content = f"```json\n{content}\n```"
            if self.path == "/api/chat":
                reply = {
                    "model": body["model"],
                    "message": {"role": "assistant", "content": content},
                }
            elif self.path == "/v1/chat/completions":
                reply = {"choices": [{"message": {"role": "assistant", "content": content}}]}
            else:
                self._send(404, b"{}")
                return
            self._send(200, json.dumps(reply).encode())

        def _send(self, status: int, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(payload)  # the client may have given up (timeout test)

    return Handler


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeModel]:
    fake = FakeModel()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("CQ_LLM_URL", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv("CQ_LLM_MODEL", "test-model")
    monkeypatch.setenv("CQ_LLM_TIMEOUT", TIMEOUT)
    yield fake
    fake.released.set()
    server.shutdown()
    server.server_close()


def search(root: Path, query: str = QUESTION, **kw: Any) -> SearchResult:
    return run_search(SearchRequest(query=query, root=str(root), **kw))


def top_definition(result: SearchResult) -> tuple[str, str]:
    first = next(f for f in result.findings if f.category == "definition")
    return first.file, first.text


@pytest.mark.parametrize("provider", ["ollama", "openai"])
def test_model_answer_drives_the_search(
    tmp_path: Path, model: FakeModel, monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    monkeypatch.setenv("CQ_LLM_PROVIDER", provider)
    if provider == "openai":
        monkeypatch.setenv("CQ_LLM_URL", os.environ["CQ_LLM_URL"] + "/v1")
    result = search(graph_repo(tmp_path))
    rw = result.summary.rewrite
    assert rw is not None and rw.applied and rw.trigger == "heuristic"
    assert rw.rewriter == f"llm:{provider}:test-model" and rw.fallback_reason is None
    assert rw.identifiers[:2] == ("insert_edge", "GraphStore") and rw.focus == "implementation"
    assert top_definition(result) == ("graphstore/store.py", "insert_edge")
    path, body = model.requests[-1]
    prompt = body["messages"][0]["content"]
    assert "insert_edge" in prompt and "span_to_byte_offset" in prompt  # the repo's names
    assert body["messages"][1]["content"] == QUESTION
    if provider == "ollama":
        assert path == "/api/chat" and body["options"]["temperature"] == 0
        assert body["format"]["required"] == ["identifiers", "literals", "focus"]
    else:
        assert path == "/v1/chat/completions" and body["temperature"] == 0
        assert body["response_format"]["type"] == "json_schema"


def test_rewrites_are_cached_per_query_and_model(tmp_path: Path, model: FakeModel) -> None:
    root = graph_repo(tmp_path)
    search(root)
    search(root)
    assert len(model.requests) == 1
    search(root, "where are nodes removed from the graph?")
    assert len(model.requests) == 2


@pytest.mark.parametrize(
    ("behaviour", "answer", "reason"),
    [
        ("slow", GOOD, "timed out"),
        ("error", GOOD, "HTTP 500"),
        ("good", "this is not json {", "invalid JSON"),
        ("good", {"identifiers": [], "literals": []}, "no usable patterns"),
        ("good", ["insert_edge"], "not a JSON object"),
    ],
)
def test_failures_fall_back_to_the_offline_rewriter(
    tmp_path: Path,
    model: FakeModel,
    monkeypatch: pytest.MonkeyPatch,
    behaviour: str,
    answer: Any,
    reason: str,
) -> None:
    model.behaviour, model.answer = behaviour, answer
    if behaviour == "slow":
        monkeypatch.setenv("CQ_LLM_TIMEOUT", "1")
    result = search(graph_repo(tmp_path))
    rw = result.summary.rewrite
    assert rw is not None and rw.rewriter == "offline"
    assert rw.fallback_reason is not None and reason in rw.fallback_reason
    assert top_definition(result) == ("graphstore/store.py", "insert_edge")
    assert not model.answered.is_set()  # never waited for the held answer (not a clock)


def test_fenced_json_is_accepted(tmp_path: Path, model: FakeModel) -> None:
    model.behaviour = "fenced"
    result = search(graph_repo(tmp_path))
    assert result.summary.rewrite is not None
    assert result.summary.rewrite.rewriter == "llm:ollama:test-model"
    assert top_definition(result) == ("graphstore/store.py", "insert_edge")


def test_hostile_patterns_never_become_flags_or_regexes(tmp_path: Path, model: FakeModel) -> None:
    model.answer = {
        "identifiers": ["--pre=sh", "-e", "a.*b|c", "(?:x)", "insert_edge", "../etc/passwd"]
        + [f"name{i}" for i in range(10_000)],
        "literals": ["--pre=sh", "foo.*bar", "x" * 500, "\n--files"],
        "focus": "everything",
    }
    result = search(graph_repo(tmp_path))
    rw = result.summary.rewrite
    assert rw is not None and rw.rewriter == "llm:ollama:test-model"
    assert "insert_edge" in rw.identifiers and len(rw.identifiers) <= 24
    # The schema, the prompt and the validation ask for and keep the same number of names.
    _, body = model.requests[-1]
    cap = body["format"]["properties"]["identifiers"]["maxItems"]
    assert f"up to {cap} function" in body["messages"][0]["content"]
    model_names = [t for t in rw.identifiers if t == "insert_edge" or t.startswith("name")]
    assert len(model_names) == cap
    assert not any(t.startswith("-") or "*" in t or "/" in t for t in rw.identifiers)
    assert "foo.*bar" in rw.literals and not any(t.startswith("-") for t in rw.literals)
    assert all(len(t) <= 80 for t in rw.literals)
    bait = [f.line_text for f in result.findings if f.file == "notes/regex_bait.py"]
    assert bait == ['PATTERN = "foo.*bar"  # literally']  # a fixed string, not a regex
    assert top_definition(result) == ("graphstore/store.py", "insert_edge")


def test_disabled_in_the_repository_config(tmp_path: Path, model: FakeModel) -> None:
    root = graph_repo(tmp_path)
    (root / "pyproject.toml").write_text("[tool.cq.rewrite]\nenabled = false\n")
    result = search(root)
    assert model.requests == []
    rw = result.summary.rewrite
    assert rw is not None and rw.rewriter == "offline" and rw.fallback_reason
    assert top_definition(result) == ("graphstore/store.py", "insert_edge")


def test_cli_reports_the_rewrite_in_markdown_and_json(tmp_path: Path, model: FakeModel) -> None:
    root = graph_repo(tmp_path)
    env = {k: v for k, v in os.environ.items() if k.startswith("CQ_")}
    md = run_cq("search", QUESTION, "--root", str(root), env=env)
    assert md.returncode == 0, md.stderr
    said = "read as a question and rewritten by the model ollama:test-model into names"
    assert f"{said}: `insert_edge`" in md.stdout
    data = run_cq("search", QUESTION, "--root", str(root), "--format", "json", env=env).json()
    assert data["summary"]["rewrite"]["identifiers"][0] == "insert_edge"
    off = run_cq(
        "search", QUESTION, "--root", str(root), "--no-rewrite", "--format", "json", env=env
    )
    assert off.json()["summary"]["rewrite"] is None


def test_markdown_says_why_the_llm_was_not_used(tmp_path: Path, model: FakeModel) -> None:
    """A person reading the report learns that their model failed, not only the JSON reader."""
    model.behaviour = "error"
    env = {k: v for k, v in os.environ.items() if k.startswith("CQ_")}
    md = run_cq("search", QUESTION, "--root", str(graph_repo(tmp_path)), env=env)
    assert md.returncode == 0, md.stderr
    assert "read as a question and rewritten offline into names: `insert_edge`" in md.stdout
    said = "your model was not used, so the rewrite was made offline: "
    fallback = [line for line in md.stdout.splitlines() if line.startswith(said)]
    assert len(fallback) == 1 and "HTTP 500" in fallback[0]


def test_env_switch_overrides_the_repository(
    tmp_path: Path, model: FakeModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``CQ_LLM=off`` keeps a machine offline quietly; ``on`` beats ``enabled = false``."""
    root = graph_repo(tmp_path)
    monkeypatch.setenv("CQ_LLM", "off")
    env = {k: v for k, v in os.environ.items() if k.startswith("CQ_")}
    md = run_cq("search", QUESTION, "--root", str(root), env=env)
    assert md.returncode == 0 and model.requests == []
    assert "rewritten offline into names" in md.stdout
    assert "your model was not used" not in md.stdout

    (root / "pyproject.toml").write_text("[tool.cq.rewrite]\nenabled = false\n")
    monkeypatch.setenv("CQ_LLM", "on")
    rw = search(root).summary.rewrite
    assert rw is not None and rw.rewriter == "llm:ollama:test-model" and len(model.requests) == 1
