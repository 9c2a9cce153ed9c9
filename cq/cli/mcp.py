"""``cq mcp``: serve cq's search as an MCP tool over stdio (imports the SDK only here)."""

from __future__ import annotations

import argparse


def add_mcp_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve the search tool over MCP (stdio)",
        description=(
            "Serve a 'search' tool over MCP on stdin/stdout. Searches run in a long-lived "
            "search process, so parse caches and workers stay warm between calls, and never "
            "read outside the root."
        ),
    )
    p.add_argument(
        "--root",
        help="the one root every search is confined to (default: $CQ_ROOT or current dir)",
    )
    p.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        metavar="N",
        help="token budget per answer; no answer is bigger (default: $CQ_MCP_MAX_TOKENS or 8000)",
    )


def run_mcp_command(args: argparse.Namespace) -> int:
    from cq.agent.mcp_server import ServerConfig, serve

    serve(ServerConfig.from_args(args.root, args.max_tokens))
    return 0
