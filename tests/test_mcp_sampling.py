"""A client that offers sampling lends its model to a question's rewrite: the real SDK client
over stdio, its sampling callback playing the model. Refused, failing or slow, the offline
rewriter answers instead and the report says why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import run_cq, write_tree
from forked_mcp import forked_stdio_client
from llm_server import ModelServer
from mcp import Client
from mcp.types import CreateMessageResult, ErrorData, Implementation, TextContent
from test_mcp_server import FIXTURE, server_params, text_of

QUESTION = "which functions pass edges to the store?"
CLIENT = Implementation(name="cq-test", version="1.0")
REWRITER = "llm:mcp-client:cq-test 1.0"
# A name the offline rewriter would not pick for the question: the client's model chose it.
ANSWER = {"identifiers": ["caller_7"], "literals": [], "focus": "implementation"}


@pytest.fixture(autouse=True)
def _patient_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole exchange with a model may take its longest (default 5 s): beside CPU burners
    the loopback endpoint's thread had not answered the CLI in time (no request recorded).
    Only the slow client's test is about the limit, and sets its own."""
    monkeypatch.setenv("CQ_LLM_TIMEOUT", "120")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "repo", FIXTURE)


class Model:
    """The client's model: records what it was asked and answers as told."""

    def __init__(self, answer: Any = None, *, sleep: float = 0.0) -> None:
        self.answer = answer
        self.sleep = sleep
        self.asked: list[Any] = []

    async def __call__(self, context: Any, params: Any) -> Any:
        self.asked.append(params)
        if self.sleep:
            await anyio.sleep(self.sleep)
        if isinstance(self.answer, Exception):
            raise self.answer
        if isinstance(self.answer, ErrorData):
            return self.answer
        text = self.answer if isinstance(self.answer, str) else json.dumps(self.answer)
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text=text), model="test-model"
        )


class ByQuestion(Model):
    """One client's model for several questions of one session, each answered its own way."""

    def __init__(self, answers: dict[str, Any]) -> None:
        super().__init__()
        self.answers = answers

    async def __call__(self, context: Any, params: Any) -> Any:
        self.answer = self.answers[params.messages[0].content.text]
        return await super().__call__(context, params)


def client(root: Path, errlog: Any, model: Model | None) -> Client:
    return Client(
        forked_stdio_client(server_params(root), errlog=errlog),
        mode="legacy",
        read_timeout_seconds=120,
        sampling_callback=model,
        client_info=CLIENT,
    )


def ask(root: Path, tmp_path: Path, model: Model | None, *queries: str) -> list[dict[str, Any]]:
    """Each query's JSON report, asked of one server by a client lending ``model``."""

    async def scenario() -> list[dict[str, Any]]:
        reports = []
        with (tmp_path / "server.err").open("a") as errlog:
            async with client(root, errlog, model) as session:
                for query in queries:
                    with anyio.fail_after(120):
                        result = await session.call_tool(
                            "search", {"query": query, "rewrite": True, "format": "json"}
                        )
                    assert not result.is_error, text_of(result)
                    reports.append(json.loads(result.content[0].text))
        return reports

    reports = anyio.run(scenario)
    assert "Traceback" not in (tmp_path / "server.err").read_text()
    return reports


def test_a_question_is_rewritten_by_the_clients_model(repo: Path, tmp_path: Path) -> None:
    model = Model(ANSWER)
    first, again = ask(repo, tmp_path, model, QUESTION, QUESTION)
    rewrite = first["summary"]["rewrite"]
    assert rewrite["rewriter"] == REWRITER and rewrite["fallback_reason"] is None
    assert rewrite["identifiers"][0] == "caller_7"
    defined = [(f["file"], f["category"]) for f in first["findings"] if f["text"] == "caller_7"]
    assert ("pkg/use.py", "definition") in defined
    # What the model was asked: the question, the repository's names, no sampling of chance.
    (params,) = model.asked  # the second, identical question came from the cache
    assert params.messages[0].content.text == QUESTION
    assert "insert_edge" in params.system_prompt and params.temperature == 0
    assert again["summary"]["rewrite"] == rewrite and again["findings"] == first["findings"]


def test_the_client_is_asked_the_prompt_an_llm_endpoint_gets(repo: Path, tmp_path: Path) -> None:
    """One rewriter, two sources: the client's model gets the system prompt and the question
    a configured endpoint gets, and its answer is validated the same way."""
    # Unusable answers are refused as an endpoint's are: not JSON, or a flag for rg.
    prose = "where do callers hand edges to the store?"
    flags = "which callers give edges to the store?"
    model = ByQuestion(
        {
            QUESTION: ANSWER,
            prose: "Sure! Search for the store.",
            flags: {"identifiers": ["--pre=sh"], "literals": ["-e"], "focus": "all"},
        }
    )
    _, unusable, flagged = ask(repo, tmp_path, model, QUESTION, prose, flags)
    with ModelServer() as endpoint:
        cli = run_cq(
            "search", QUESTION, "--root", str(repo), "--rewrite", env={"CQ_LLM_URL": endpoint.url}
        )
        assert cli.returncode == 0, cli.stderr
        (request,) = endpoint.requests
    system, user = request.body["messages"]
    assert model.asked[0].system_prompt == system["content"]
    assert model.asked[0].messages[0].content.text == user["content"]
    assert unusable["summary"]["rewrite"]["rewriter"] == "offline"
    assert "invalid JSON from the model" in unusable["summary"]["rewrite"]["fallback_reason"]
    assert "no usable patterns" in flagged["summary"]["rewrite"]["fallback_reason"]


def test_a_refusing_or_failing_client_falls_back_to_the_offline_rewriter(
    repo: Path, tmp_path: Path
) -> None:
    """A client that refuses (an MCP error) or whose callback fails: each question asked once,
    answered by the offline rewriter, the reason said; one session asks both."""
    refused, failing = QUESTION, "which functions hand edges to the store?"
    model = ByQuestion(
        {
            refused: ErrorData(code=-1, message="User rejected sampling"),
            failing: RuntimeError("the model is down"),
        }
    )
    reports = ask(repo, tmp_path, model, refused, failing)
    assert [p.messages[0].content.text for p in model.asked] == [refused, failing]
    for report, reason in zip(
        reports, ("refused (User rejected sampling)", "refused ("), strict=True
    ):
        rewrite = report["summary"]["rewrite"]
        assert rewrite["rewriter"] == "offline" and rewrite["applied"]
        assert rewrite["fallback_reason"].startswith(f"llm mcp-client:cq-test 1.0: {reason}")
        assert report["findings"]  # the offline rewrite found the code


def test_a_slow_client_times_out_and_the_search_answers_offline(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CQ_LLM_TIMEOUT", "1")
    model = Model(ANSWER, sleep=60)
    (report,) = ask(repo, tmp_path, model, QUESTION)
    rewrite = report["summary"]["rewrite"]
    assert len(model.asked) == 1 and rewrite["rewriter"] == "offline"
    assert rewrite["fallback_reason"] == "llm mcp-client:cq-test 1.0: timed out after 1 s"


def test_without_sampling_or_with_the_llm_off_the_client_is_not_asked(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (plain,) = ask(repo, tmp_path, None, QUESTION)  # the configured endpoint is tried instead
    assert plain["summary"]["rewrite"]["fallback_reason"].startswith("llm ollama at")
    monkeypatch.setenv("CQ_LLM", "off")
    model = Model(ANSWER)
    (off,) = ask(repo, tmp_path, model, QUESTION)
    assert model.asked == [] and off["summary"]["rewrite"]["rewriter"] == "offline"
