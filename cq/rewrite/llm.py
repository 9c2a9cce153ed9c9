"""The LLM rewriter over httpx: Ollama's native chat API or any OpenAI-compatible endpoint.

Temperature 0 and a JSON schema (Ollama ``format``, OpenAI ``response_format``). The prompt
carries the repository's defined names, most relevant to the query first, so a small model
picks real identifiers. Every failure raises ``LlmUnavailable`` with a short reason; the caller
falls back to the offline rewriter. httpx is imported here only, when a rewrite needs it.
"""

from __future__ import annotations

import socket
from typing import Any
from urllib.parse import urlsplit

import msgspec

from cq.rewrite.config import LlmConfig
from cq.rewrite.validate import InvalidAnswer, ModelAnswer, parse_answer

MAX_VOCABULARY = 300
_MAX_QUERY_CHARS = 6000

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "identifiers": {"type": "array", "items": {"type": "string"}, "maxItems": 12},
        "literals": {"type": "array", "items": {"type": "string"}, "maxItems": 4},
        "focus": {"type": "string", "enum": ["implementation", "tests", "all"]},
    },
    "required": ["identifiers", "literals", "focus"],
}

_SYSTEM = """You turn a question or an issue report about a code base into search patterns.
Answer with one JSON object only:
{"identifiers": [...], "literals": [...], "focus": "implementation" | "tests" | "all"}
- identifiers: up to 12 function, class, method or variable names to search for, most
  relevant first; prefer names from the list of names defined in this repository.
- literals: up to 4 exact strings likely to appear in the code (messages, keywords).
- focus: "tests" when the question is about tests, "implementation" when it is about how the
  code works or about a bug, "all" when unclear.
Names defined in this repository (most relevant first):
"""


class LlmUnavailable(Exception):
    """The model could not give a usable answer; the message says why, in a few words."""


def probe(config: LlmConfig) -> None:
    """Raise ``LlmUnavailable`` unless something accepts TCP connections at the URL.

    A plain socket, so an absent server costs a refused connect, not an httpx import.
    """
    parts = urlsplit(config.url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LlmUnavailable(f"unusable URL {config.url!r}")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=config.connect_timeout):
            pass
    except TimeoutError:
        raise LlmUnavailable("connect timed out") from None
    except OSError as exc:
        raise LlmUnavailable(f"unreachable ({exc.strerror or type(exc).__name__})") from None


def llm_rewrite(query: str, config: LlmConfig, vocabulary: list[str]) -> ModelAnswer:
    """Ask the model; raise ``LlmUnavailable`` on any failure."""
    import httpx

    messages = [
        {"role": "system", "content": _SYSTEM + ", ".join(vocabulary[:MAX_VOCABULARY])},
        {"role": "user", "content": query[:_MAX_QUERY_CHARS]},
    ]
    url, body = _request(config, messages)
    headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
    timeout = httpx.Timeout(config.timeout, connect=min(config.connect_timeout, config.timeout))
    try:
        plain = config.url.startswith("http://")  # no TLS: skip loading the CA bundle
        with httpx.Client(timeout=timeout, trust_env=False, verify=not plain) as client:
            response = client.post(url, json=body, headers=headers)
    except httpx.TimeoutException:
        raise LlmUnavailable(f"timed out after {config.timeout:g} s") from None
    except httpx.HTTPError as exc:
        raise LlmUnavailable(f"unreachable ({type(exc).__name__})") from None
    if response.status_code != 200:
        raise LlmUnavailable(f"HTTP {response.status_code}")
    try:
        return parse_answer(_content(config, response.content))
    except InvalidAnswer as exc:
        raise LlmUnavailable(str(exc)) from None


def _request(config: LlmConfig, messages: list[dict[str, str]]) -> tuple[str, dict[str, Any]]:
    base = config.url.rstrip("/")
    if config.provider == "openai":
        url = base if base.endswith("/chat/completions") else base + "/chat/completions"
        return url, {
            "model": config.model,
            "messages": messages,
            "temperature": 0,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "cq_rewrite", "schema": SCHEMA},
            },
        }
    url = base if base.endswith("/api/chat") else base + "/api/chat"
    return url, {
        "model": config.model,
        "messages": messages,
        "stream": False,
        "format": SCHEMA,
        "options": {"temperature": 0},
    }


class _Message(msgspec.Struct):
    content: str


class _OllamaReply(msgspec.Struct):
    message: _Message


class _Choice(msgspec.Struct):
    message: _Message


class _OpenAiReply(msgspec.Struct):
    choices: list[_Choice]


def _content(config: LlmConfig, raw: bytes) -> str:
    try:
        if config.provider == "openai":
            reply = msgspec.json.decode(raw, type=_OpenAiReply)
            if not reply.choices:
                raise LlmUnavailable("empty answer")
            return reply.choices[0].message.content
        return msgspec.json.decode(raw, type=_OllamaReply).message.content
    except msgspec.DecodeError:
        raise LlmUnavailable("malformed response body") from None
