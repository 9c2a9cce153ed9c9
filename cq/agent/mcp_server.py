"""``cq mcp``: the search pipeline as an MCP ``search`` tool over stdio (official ``mcp`` SDK).

One long-lived process: module-level parse caches (``cq.parse``) and the classifier's worker
pool and persistent cache stay warm between calls. Searches run one at a time on one
dedicated thread (thread-bound state is reused), so the event loop keeps answering pings.
A search that fails (bad root, invalid regex, anything a ``CqError`` reports) comes back as an
``is_error`` tool result with the same one-line message the CLI prints; arguments that fail
the schema are rejected by the SDK the same way; the server keeps serving either way. A search
the client cancels stops at its next checkpoint (``cq.cancel``), freeing the search thread. Only
this module imports ``mcp``.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Literal

import msgspec
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import TextContent, ToolAnnotations
from pydantic import Field

from cq.agent.budget import MIN_BUDGET, MIN_SERVER_BUDGET, Answer, fit
from cq.cancel import CancelToken
from cq.errors import CqError, SearchCancelledError, UsageError
from cq.model import SearchRequest
from cq.profiles import load_profile

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
        if max_tokens is None:
            env = os.environ.get("CQ_MCP_MAX_TOKENS")
            try:
                max_tokens = int(env) if env else DEFAULT_MAX_TOKENS
            except ValueError:
                raise UsageError(f"CQ_MCP_MAX_TOKENS is not a whole number: {env}") from None
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


def build_server(config: ServerConfig, searching: threading.Event | None = None) -> MCPServer:
    """The MCP server with its ``search`` and ``stats`` tools; ``searching`` is set when the
    first search starts."""
    from cq import __version__

    server = MCPServer(
        name="cq", version=__version__, instructions=_INSTRUCTIONS, log_level="WARNING"
    )
    stats = ServerStats()
    # Every search runs on this one thread, one at a time: the stages' process-wide state
    # (parse caches, the classifier's pool, the sqlite cache connection, which sqlite ties
    # to the thread that opened it) is then used exactly as in a one-shot ``cq search``.
    search_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cq-search")

    def run(request: SearchRequest, fmt: str, token: CancelToken) -> Answer:
        if searching is not None:
            searching.set()
        try:
            return _answer(request, fmt, config.max_tokens, token)
        except SearchCancelledError:
            stats.stopped_early += 1
            raise

    async def search(
        query: Annotated[str, Field(min_length=1, description="what to search for")],
        root: Annotated[
            str | None, Field(description="repository root (default: the server's)")
        ] = None,
        lang: Literal["auto", "python", "rust"] = "auto",
        mode: Annotated[
            Literal["identifier", "literal", "regex"] | None,
            Field(description="default: decided from the query"),
        ] = None,
        include: Annotated[list[str] | None, Field(description="rg globs to include")] = None,
        exclude: Annotated[list[str] | None, Field(description="rg globs to exclude")] = None,
        in_dir: Annotated[str | None, Field(description="only this subtree of the root")] = None,
        focus: Literal["implementation", "tests", "all"] | None = None,
        rewrite: Annotated[
            bool | None,
            Field(description="rewrite natural language into patterns: true force, false never"),
        ] = None,
        ignore_case: bool = False,
        hidden: Annotated[bool, Field(description="search hidden files too")] = False,
        no_ignore: Annotated[bool, Field(description="do not respect .gitignore")] = False,
        context: Annotated[
            str | None, Field(description="earlier conversation, to resolve 'it' in the query")
        ] = None,
        follow_up: Annotated[
            bool, Field(description="remember this answer per root; resolve 'it' from the last one")
        ] = False,
        explain: Annotated[bool, Field(description="show each finding's score breakdown")] = False,
        limit: Annotated[int, Field(ge=0, description="findings shown; 0 = all")] = 30,
        max_tokens: Annotated[
            int | None,
            Field(ge=1, description="token budget of this answer (capped by the server's)"),
        ] = None,
        format: Literal["md", "json"] = "md",
        profile: Annotated[str, Field(description="search-limit preset")] = "interactive",
    ) -> list[TextContent]:
        stats.calls += 1
        budget = max(MIN_BUDGET, min(max_tokens or config.max_tokens, config.max_tokens))
        try:
            if not query.strip():
                raise UsageError("empty query")
            request = SearchRequest(
                query=query,
                root=os.path.abspath(os.path.join(config.root, root or ".")),
                mode=mode,
                lang=lang,
                profile=profile,
                limits=load_profile(profile),
                include=tuple(include or ()),
                exclude=tuple(exclude or ()),
                in_dir=in_dir,
                hidden=hidden,
                no_ignore=no_ignore,
                ignore_case=ignore_case,
                limit=limit,
                max_tokens=budget,
                focus=focus,
                rewrite=rewrite,
                context=context,
                follow_up=follow_up,
                explain=explain,
            )
            token = CancelToken()
            job = search_thread.submit(run, request, format, token)
            try:
                answer = await asyncio.wrap_future(job)
            except asyncio.CancelledError:  # the client sent notifications/cancelled
                stats.cancelled += 1
                token.cancel()  # the search thread stops at its next checkpoint
                raise
        except CqError as exc:
            stats.errors += 1
            raise ToolError(str(exc)) from None
        except Exception as exc:  # a bug in cq must not take the server down
            stats.errors += 1
            traceback.print_exc(file=sys.stderr)
            raise ToolError(f"internal error: {type(exc).__name__}: {exc}") from None
        stats.cut_to_budget += answer.result.summary.omitted.by_budget > 0
        blocks = [TextContent(type="text", text=answer.text)]
        if answer.note:
            if format == "md":
                blocks[0] = TextContent(type="text", text=f"{answer.text}\n> {answer.note}\n")
            else:
                blocks.append(TextContent(type="text", text=answer.note))
        return blocks

    async def stats_tool() -> list[TextContent]:
        body = {"server": msgspec.to_builtins(stats), "caches": _cache_counters()}
        return [TextContent(type="text", text=msgspec.json.encode(body).decode())]

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


def _answer(request: SearchRequest, fmt: str, cap: int, token: CancelToken) -> Answer:
    """Run the search (in a worker thread), then cut and render it within the budget."""
    from cq.pipeline import run_search
    from cq.report import render_json, render_markdown

    render = render_json if fmt == "json" else render_markdown
    return fit(request, run_search(request, cancel=token), render, cap, is_json=fmt == "json")


def _cache_counters() -> dict[str, dict[str, int]]:
    """Process-wide cache counters from the stages that keep them (empty when none do)."""
    counters: dict[str, dict[str, int]] = {}
    try:
        from cq.parse import cache_stats
    except ImportError:
        return counters
    counters["parse"] = dict(cache_stats())
    return counters


_HEAVY_MODULES = ("ast_grep_py", "tree_sitter_python", "tree_sitter_rust", "libcst")


def serve(config: ServerConfig) -> None:
    """Serve until stdin closes. The agent starts the server once, so the libraries a search
    imports lazily are imported up front, in a background thread (``initialize`` is not
    delayed). Once a search starts, the warm-up stops after the import under way: the search
    imports what it needs itself, and a second thread importing would only slow it down."""
    import contextlib
    import importlib

    import cq.pipeline
    import cq.report  # noqa: F401

    searching = threading.Event()

    def warm_up() -> None:
        for name in _HEAVY_MODULES:  # a missing one is reported by the stage that needs it
            if searching.is_set():
                return
            with contextlib.suppress(ImportError):
                importlib.import_module(name)

    threading.Thread(target=warm_up, name="cq-warm-up", daemon=True).start()
    build_server(config, searching).run("stdio")
