"""``cq mcp``: the search pipeline as an MCP ``search`` tool over stdio (official ``mcp`` SDK).

One long-lived server process speaks the protocol (``mcp_wire``: every line, even a
malformed one, is answered); the searches run in long-lived search processes
(``workers``/``search_worker``), whose parse caches, classifier pool and cache connection
stay warm between calls. The server's event loop never runs a search, so it answers pings,
lists and cancellations while one runs; a search the client cancels stops at its next
checkpoint (``cq.cancel``) or is killed; at the end of stdin the server exits at once.

The tools are served by the SDK's low-level server, so cq checks every call's arguments
itself (``mcp_args``: unknown names, ranges, types) and words every error: a search that
fails (a path outside the root, an invalid regex, anything a ``CqError`` reports) comes back
as an ``is_error`` tool result with the same one-line message the CLI prints. A result
carries its report as text and as structured content, described by the tool's output
schema: a JSON report is ``cq schema``'s ``SearchResult``, a markdown one
``{"markdown": text}``. When the client offers sampling, a question's rewrite may ask the
client's model (``mcp_sampling``). The server's root is fixed at start-up (``cq.confine``).
Only this module, ``mcp_sampling`` and ``mcp_wire`` import ``mcp``.
"""

from __future__ import annotations

import json
import re
import warnings
from typing import TYPE_CHECKING, Any

import anyio
import msgspec
from mcp.server.lowlevel import Server
from mcp.types import CallToolResult, ListToolsResult, TextContent, Tool, ToolAnnotations

from cq.agent.mcp_args import ArgumentError, check_arguments, input_schema
from cq.agent.mcp_config import ServerConfig
from cq.agent.worker_protocol import Failed
from cq.agent.workers import SearchProcesses

if TYPE_CHECKING:
    from cq.model import AnswerRecord

_SURROGATE = re.compile("[\ud800-\udfff]")

_INSTRUCTIONS = (
    "cq searches Python and Rust code: ripgrep finds candidates, every hit is classified "
    "(definition, callsite, import, assignment, reference, annotation, docstring, comment, "
    "string), ranked best first and reported compactly. Prefer its 'search' tool to grep for "
    "where a name is defined, called or imported, or for the code a question or issue text is "
    "about. Answers fit a token budget and end with a note when findings were left out."
)

_SEARCH_DESCRIPTION = (
    "Search Python/Rust code and report what each hit is (definition, callsite, import, "
    "assignment, reference, annotation, docstring/comment/string), best first. The query is an "
    "identifier (word-bounded; dotted and Type::method paths too), a literal, a regex "
    "(mode='regex') or a natural-language question. Markdown by default; format='json' returns "
    "exactly `cq search --format json`, also as structured content. The answer never exceeds "
    "max_tokens (default: the server's budget) and says what was left out and how to get more."
)

_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


class ServerStats(msgspec.Struct):
    """Counters of this process, reported by the ``stats`` tool (warm caches show here)."""

    calls: int = 0
    errors: int = 0
    cut_to_budget: int = 0
    cancelled: int = 0  # searches whose client sent notifications/cancelled
    stopped_early: int = 0  # of those, searches that stopped before finishing their work
    killed: int = 0  # of those, searches stuck in one step, killed with their process
    retired: int = 0  # search processes replaced to give their memory back (cq.server.memory)


def output_schema() -> dict[str, Any]:
    """The ``search`` tool's ``outputSchema``: ``cq schema``'s ``SearchResult`` (a JSON
    report) or ``{"markdown": text}`` (a markdown one), at an object root as MCP asks."""
    from cq.report import report_schema

    generated = report_schema()
    defs = generated["$defs"]
    said = {
        k: v for k, v in defs["AnswerRecord"]["properties"].items() if k not in _FINDING_INDEXES
    }
    defs["MarkdownAnswer"] = {
        "type": "object",
        "description": "the report's Answer line as data (AnswerRecord, less its indexes into "
        "a JSON report's findings)",
        "properties": said,
        "required": [k for k in defs["AnswerRecord"].get("required", []) if k in said],
        "additionalProperties": False,
    }
    defs["MarkdownReport"] = {
        "type": "object",
        "description": "format 'md': the report as markdown, the same text as the content, "
        "and its Answer as data (absent when nothing answers)",
        "properties": {
            "markdown": {"type": "string"},
            "answer": {"$ref": "#/$defs/MarkdownAnswer"},
        },
        "required": ["markdown"],
        "additionalProperties": False,
    }
    refs = [{"$ref": generated["$ref"]}, {"$ref": "#/$defs/MarkdownReport"}]
    return {"type": "object", "anyOf": refs, "$defs": defs}


def build_server(config: ServerConfig, processes: SearchProcesses) -> Server:
    """The MCP server with its ``search`` and ``stats`` tools; searches run in ``processes``."""
    from cq import __version__
    from cq.agent.mcp_sampling import client_model

    stats = ServerStats()
    tools = [
        Tool(
            name="search",
            description=_SEARCH_DESCRIPTION,
            input_schema=input_schema(),
            output_schema=output_schema(),
            annotations=_READ_ONLY,
        ),
        Tool(
            name="stats",
            description="Counters of this cq server process: calls, errors, cache hits and misses.",
            input_schema={"type": "object", "properties": {}, "additionalProperties": False},
            annotations=_READ_ONLY,
        ),
    ]

    async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> CallToolResult:
        arguments = params.arguments or {}
        if params.name == "stats":
            if arguments:
                return _error(f"the stats tool takes no arguments: {', '.join(arguments)}")
            return _stats(stats, processes)
        if params.name != "search":
            return _error(f"unknown tool `{params.name}`; this server has: search, stats")
        stats.calls += 1
        try:
            args = check_arguments(arguments, config.max_tokens)
            outcome = await processes.search(
                args, config.root, config.max_tokens, client_model(ctx)
            )
        except ArgumentError as exc:
            stats.errors += 1
            return _error(str(exc))
        except anyio.get_cancelled_exc_class():  # notifications/cancelled, or the input ended
            stats.cancelled += 1
            raise
        except OSError as exc:  # no search process could be started
            stats.errors += 1
            return _error(f"internal error: cannot start a search process: {exc}")
        if isinstance(outcome, Failed):
            stats.errors += 1
            return _error(outcome.message)
        stats.cut_to_budget += outcome.cut_to_budget
        if args.format == "md":
            text = f"{outcome.text}\n> {outcome.note}\n" if outcome.note else outcome.text
            return CallToolResult(
                content=[TextContent(type="text", text=text)],
                structured_content=_markdown_report(text, outcome.answer),
            )
        blocks = [TextContent(type="text", text=outcome.text)]
        if outcome.note:
            blocks.append(TextContent(type="text", text=outcome.note))
        return CallToolResult(content=blocks, structured_content=_structured(outcome.text))

    return Server(
        "cq",
        version=__version__,
        instructions=_INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _markdown_report(text: str, answer: AnswerRecord | None) -> dict[str, Any]:
    """A markdown report as structured content: its text, and its Answer as data (what a JSON
    report's ``answer`` says), less the indexes into a JSON report's findings, which this
    report has none of."""
    out: dict[str, Any] = {"markdown": text}
    if answer is not None:
        said = msgspec.to_builtins(answer)
        out["answer"] = {k: v for k, v in said.items() if k not in _FINDING_INDEXES}
    return out


# the Answer's fields that index a JSON report's ``findings``
_FINDING_INDEXES = ("finding", "calls")


def _structured(report: str) -> dict[str, Any]:
    """The JSON report as structured content. A file name that is not UTF-8 is in the report
    as ``\\udcXX`` escapes, which read back as lone surrogates: no UTF-8 wire carries those
    and the SDK's parser refuses their escapes, so they are spelled as the markdown shows them
    (the escape's text)."""
    data = json.loads(report)
    return _spelled(data) if "\\ud" in report else data


def _spelled(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", value)
    if isinstance(value, dict):
        return {_spelled(key): _spelled(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_spelled(item) for item in value]
    return value


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def _stats(stats: ServerStats, processes: SearchProcesses) -> CallToolResult:
    stats.stopped_early, stats.killed = processes.stopped_early, processes.killed
    stats.retired = processes.retired
    body = {"server": msgspec.to_builtins(stats), "caches": {"parse": processes.caches()}}
    text = msgspec.json.encode(body).decode()
    return CallToolResult(content=[TextContent(type="text", text=text)])


def serve(config: ServerConfig) -> None:
    """Serve until stdin closes, then kill the search processes (a running search too)."""
    from mcp.shared.exceptions import MCPDeprecationWarning

    # Sampling is deprecated by the protocol's next version; the clients of this one offer it.
    warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
    processes = SearchProcesses()
    processes.start()
    try:
        anyio.run(_serve_stdio, build_server(config, processes), backend="asyncio")
    finally:
        processes.close()


async def _serve_stdio(server: Server) -> None:
    from cq.agent.mcp_wire import stdio_streams

    # The SDK's own stdio transport leaves a malformed line unanswered (mcp_wire).
    async with stdio_streams() as (incoming, outgoing):
        await server.run(incoming, outgoing, server.create_initialization_options())
