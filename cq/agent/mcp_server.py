"""``cq mcp``: the search pipeline as an MCP ``search`` tool over stdio (official ``mcp`` SDK).

One long-lived server process speaks the protocol (``mcp_wire``: every line, even a
malformed one, is answered); the searches run in long-lived search processes
(``workers``/``search_worker``), whose parse caches, classifier pool and cache connection
stay warm between calls. The server's event loop never runs a search, so it answers pings,
lists and cancellations while one runs; a search the client cancels stops at its next
checkpoint (``cq.cancel``) or is killed; at the end of stdin the server exits at once.
A search that fails (a path outside the root, an invalid regex, anything a ``CqError``
reports) comes back as an ``is_error`` tool result with the same one-line message the CLI
prints; arguments that fail the schema are rejected by the SDK the same way. The server's
root is fixed at start-up (``cq.confine``). Only this module and ``mcp_wire`` import ``mcp``.
"""

from __future__ import annotations

import inspect
import os
import typing
from typing import Annotated, Any

import anyio
import msgspec
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import TextContent, ToolAnnotations
from pydantic import Field

from cq.agent.budget import MIN_BUDGET, MIN_SERVER_BUDGET
from cq.agent.worker_protocol import Failed, SearchArgs
from cq.agent.workers import SearchProcesses
from cq.env import env_int
from cq.errors import UsageError
from cq.model.options import SEARCH_OPTIONS, tool_arguments

DEFAULT_MAX_TOKENS = 8000

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
    "exactly `cq search --format json`. The answer never exceeds max_tokens (default: the "
    "server's budget) and says what was left out and how to get more."
)


class ServerConfig(msgspec.Struct, frozen=True):
    """Per-process settings: the default root and the token budget no answer may exceed."""

    root: str
    max_tokens: int = DEFAULT_MAX_TOKENS

    @classmethod
    def from_args(cls, root: str | None, max_tokens: int | None) -> ServerConfig:
        root = os.path.abspath(root or os.environ.get("CQ_ROOT") or ".")
        if not os.path.isdir(root):
            raise UsageError(f"root not found: {root}")
        if max_tokens is None:  # checked with every CQ_* setting by cq.env
            max_tokens = env_int("CQ_MCP_MAX_TOKENS", DEFAULT_MAX_TOKENS)
        if max_tokens < MIN_SERVER_BUDGET:
            raise UsageError(f"--max-tokens must be at least {MIN_SERVER_BUDGET}: {max_tokens}")
        return cls(root=root, max_tokens=max_tokens)


class ServerStats(msgspec.Struct):
    """Counters of this process, reported by the ``stats`` tool (warm caches show here)."""

    calls: int = 0
    errors: int = 0
    cut_to_budget: int = 0
    cancelled: int = 0  # searches whose client sent notifications/cancelled
    stopped_early: int = 0  # of those, searches that stopped before finishing their work
    killed: int = 0  # of those, searches stuck in one step, killed with their process


def build_server(config: ServerConfig, processes: SearchProcesses) -> MCPServer:
    """The MCP server with its ``search`` and ``stats`` tools; searches run in ``processes``."""
    from cq import __version__

    server = MCPServer(
        name="cq", version=__version__, instructions=_INSTRUCTIONS, log_level="WARNING"
    )
    stats = ServerStats()

    async def search(**arguments: Any) -> list[TextContent]:
        """The ``search`` tool; its arguments are ``cq.model.options``' (``_tool_signature``)."""
        stats.calls += 1
        asked = arguments.get("max_tokens") or config.max_tokens
        budget = max(MIN_BUDGET, min(asked, config.max_tokens))
        args = SearchArgs(**arguments, budget=budget)
        fmt = args.format
        try:
            outcome = await processes.search(args, config.root, config.max_tokens)
        except anyio.get_cancelled_exc_class():  # notifications/cancelled, or the input ended
            stats.cancelled += 1
            raise
        except OSError as exc:  # no search process could be started
            stats.errors += 1
            raise ToolError(f"internal error: cannot start a search process: {exc}") from None
        if isinstance(outcome, Failed):
            stats.errors += 1
            raise ToolError(outcome.message)
        stats.cut_to_budget += outcome.cut_to_budget
        blocks = [TextContent(type="text", text=outcome.text)]
        if outcome.note:
            if fmt == "md":
                blocks[0] = TextContent(type="text", text=f"{outcome.text}\n> {outcome.note}\n")
            else:
                blocks.append(TextContent(type="text", text=outcome.note))
        return blocks

    async def stats_tool() -> list[TextContent]:
        stats.stopped_early, stats.killed = processes.stopped_early, processes.killed
        body = {"server": msgspec.to_builtins(stats), "caches": {"parse": processes.caches()}}
        return [TextContent(type="text", text=msgspec.json.encode(body).decode())]

    search.__signature__ = _tool_signature()  # type: ignore[attr-defined]
    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    server.add_tool(
        search,
        name="search",
        description=_SEARCH_DESCRIPTION,
        annotations=read_only,
        structured_output=False,
    )
    server.add_tool(
        stats_tool,
        name="stats",
        description="Counters of this cq server process: calls, errors, cache hits and misses.",
        annotations=read_only,
        structured_output=False,
    )
    return server


def _tool_signature() -> inspect.Signature:
    """The ``search`` tool's arguments (``cq.model.options.tool_arguments``) with each option's
    description and bounds: the SDK turns this signature into the tool's JSON schema."""
    options = {o.mcp_name or o.name: o for o in SEARCH_OPTIONS}
    parameters = []
    for name, kind, default in tool_arguments():
        option = options[name]
        if typing.get_origin(kind) is tuple:
            kind = list[str]  # a JSON array
            default = list(default)
        bounds: dict[str, Any] = {"description": option.mcp_help or option.help}
        least = option.mcp_minimum if option.mcp_minimum is not None else option.minimum
        if least is not None:
            bounds["ge"] = least
        if name == "query":
            bounds["min_length"] = 1
        parameters.append(
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=inspect.Parameter.empty if default is msgspec.NODEFAULT else default,
                annotation=Annotated[kind, Field(**bounds)],
            )
        )
    return inspect.Signature(parameters, return_annotation=list[TextContent])


def serve(config: ServerConfig) -> None:
    """Serve until stdin closes, then kill the search processes (a running search too)."""
    processes = SearchProcesses()
    processes.start()
    try:
        anyio.run(_serve_stdio, build_server(config, processes), backend="asyncio")
    finally:
        processes.close()


async def _serve_stdio(server: MCPServer) -> None:
    from cq.agent.mcp_wire import stdio_streams

    # MCPServer.run_stdio_async does this with the SDK's transport; this transport answers
    # malformed lines too (mcp_wire). MCPServer has no public hook for other streams.
    lowlevel = server._lowlevel_server
    async with stdio_streams() as (incoming, outgoing):
        await lowlevel.run(incoming, outgoing, lowlevel.create_initialization_options())
