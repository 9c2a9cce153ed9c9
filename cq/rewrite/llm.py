"""The LLM rewriter over httpx: Ollama's native chat API or any OpenAI-compatible endpoint.

Temperature 0 and a JSON schema (Ollama ``format``, OpenAI ``response_format``). The prompt
carries the repository's defined names, most relevant to the query first, so a small model
picks real identifiers. Every failure raises ``LlmUnavailable`` with a short reason; the caller
falls back to the offline rewriter. The probe and the request share one deadline, the
configured timeout (``post.py``); httpx is imported only when a rewrite needs it.
"""

from __future__ import annotations

import socket
import time
from typing import Any
from urllib.parse import urlsplit

import msgspec

from cq.rewrite.config import LlmConfig
from cq.rewrite.post import PostFailed, PostTimedOut, post_json
from cq.rewrite.validate import MAX_DEPTH, InvalidAnswer, ModelAnswer, json_depth, parse_answer

MAX_VOCABULARY = 300
MAX_BODY_BYTES = 1024 * 1024  # a reply carries one answer of a few hundred bytes
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


def deadline_of(config: LlmConfig) -> float:
    """The ``time.monotonic()`` by which the probe and the answer must be done."""
    return time.monotonic() + config.timeout


def probe(config: LlmConfig, deadline: float) -> None:
    """Raise ``LlmUnavailable`` unless something accepts TCP connections at the URL.

    A plain socket, so an absent server costs a refused connect, not an httpx import.
    """
    parts = urlsplit(config.url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:  # a port that is no number or out of range
        port = 0
    if parts.scheme not in ("http", "https") or not parts.hostname or not port:
        raise LlmUnavailable(f"unusable URL {config.url!r}")
    seconds = min(config.connect_timeout, deadline - time.monotonic())
    try:
        with socket.create_connection((parts.hostname, port), timeout=max(seconds, 0.001)):
            pass
    except TimeoutError:
        raise LlmUnavailable("connect timed out") from None
    except OSError as exc:
        raise LlmUnavailable(f"unreachable ({exc.strerror or type(exc).__name__})") from None
    except (UnicodeError, ValueError):  # a host name IDNA cannot encode, a NUL in it
        raise LlmUnavailable(f"unusable URL {config.url!r}") from None


def llm_rewrite(
    query: str, config: LlmConfig, vocabulary: list[str], deadline: float
) -> ModelAnswer:
    """Ask the model, all of it before ``deadline``; raise ``LlmUnavailable`` on any failure."""
    messages = [
        {"role": "system", "content": _SYSTEM + ", ".join(vocabulary[:MAX_VOCABULARY])},
        {"role": "user", "content": query[:_MAX_QUERY_CHARS]},
    ]
    url, body = _request(config, messages)
    headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
    try:
        raw = post_json(
            url,
            body,
            headers,
            deadline=deadline,
            connect_timeout=config.connect_timeout,
            max_bytes=MAX_BODY_BYTES,
        )
    except PostTimedOut:
        raise LlmUnavailable(f"timed out after {config.timeout:g} s") from None
    except PostFailed as exc:
        raise LlmUnavailable(str(exc)) from None
    try:
        return parse_answer(_content(config, raw))
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
    if json_depth(raw) > MAX_DEPTH:
        raise LlmUnavailable(f"response nested deeper than {MAX_DEPTH} levels")
    try:
        if config.provider == "openai":
            reply = msgspec.json.decode(raw, type=_OpenAiReply)
            if not reply.choices:
                raise LlmUnavailable("empty answer")
            return reply.choices[0].message.content
        return msgspec.json.decode(raw, type=_OllamaReply).message.content
    except msgspec.DecodeError:
        raise LlmUnavailable("malformed response body") from None
