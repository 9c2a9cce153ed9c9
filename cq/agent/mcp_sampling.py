"""The MCP client's model as a rewriter: ``sampling/createMessage`` for a search's question.

A client that declares the ``sampling`` capability lets the server ask its model. A search
process rewriting a question sends the rewrite's prompt (``cq.rewrite.llm``'s, the same one
an LLM endpoint gets) as a ``Sample`` frame; the call that runs the search asks the client
here and sends back a ``Sampled``: the text, or why there is none (the client refused, an
error, no answer within the seconds the search still waits, an answer that is not text).
The search then validates the text as it validates an endpoint's answer, or falls back to
the offline rewriter, saying why.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.shared.exceptions import MCPError
from mcp.types import SamplingMessage, TextContent

from cq.agent.worker_protocol import Sample, Sampled
from cq.agent.workers import ClientModel

_REASON_CHARS = 200  # a client's refusal is its own text: one short line of it


def client_model(ctx: Any) -> ClientModel | None:
    """The client's model for this call, when the client offers sampling."""
    session = ctx.session
    capabilities = session.client_capabilities
    if capabilities is None or capabilities.sampling is None:
        return None
    params = session.client_params
    info = params.client_info if params is not None else None
    client = f"{info.name} {info.version}" if info is not None else "mcp client"

    async def ask(question: Sample) -> Sampled:
        return await _ask(session, ctx.request_id, question)

    return ClientModel(client=client, ask=ask)


async def _ask(session: Any, request_id: Any, question: Sample) -> Sampled:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=question.user))
    try:
        with anyio.fail_after(max(question.seconds, 0.001)):
            result = await session.create_message(
                [message],
                max_tokens=question.max_tokens,
                system_prompt=question.system,
                temperature=0,
                related_request_id=request_id,
            )
    except TimeoutError:
        return _none(question, f"timed out after {round(question.seconds):g} s")
    except MCPError as exc:
        return _none(question, f"refused ({_one_line(exc.message)})")
    except Exception as exc:  # a malformed result, a closed channel: the offline rewrite
        return _none(question, f"failed ({type(exc).__name__})")
    if not isinstance(result.content, TextContent):
        return _none(question, f"answered with {result.content.type}, not text")
    return Sampled(id=question.id, text=result.content.text)


def _none(question: Sample, reason: str) -> Sampled:
    return Sampled(id=question.id, text=None, reason=reason)


def _one_line(text: str) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= _REASON_CHARS else line[: _REASON_CHARS - 3] + "..."
