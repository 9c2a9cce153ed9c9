"""What coding agents use: ``cq agent install|uninstall`` puts the /cq command files where
they find them and registers ``cq mcp`` with them; ``cq mcp`` serves cq's search as an MCP
tool over stdio (imports the SDK only then)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from cq.errors import UsageError


def add_agent_parser(sub: argparse._SubParsersAction) -> None:
    agent = sub.add_parser(
        "agent",
        help="install the /cq slash command and the MCP server for coding agents",
        description="Install or uninstall cq's command files and MCP server for coding agents.",
    )
    actions = agent.add_subparsers(dest="agent_command", parser_class=type(agent))
    install = actions.add_parser(
        "install",
        help="write the command files and register the MCP server (idempotent)",
        description=(
            "Write /cq for Claude Code (.claude/commands/cq.md) and Codex (.agents/skills/cq, "
            "and $CODEX_HOME/prompts/cq.md with --user), and register 'cq mcp' as the MCP "
            "server 'cq': Claude Code's .mcp.json (--user: ~/.claude.json), Codex's "
            ".codex/config.toml, read in trusted projects (--user: $CODEX_HOME/config.toml), "
            "and with --cursor/--gemini Cursor's .cursor/mcp.json and Gemini CLI's "
            ".gemini/settings.json (--user: the same under the home directory). A project's "
            "files, which are committed, run 'cq' from PATH (or a venv inside the project by "
            "its path from the root); --user files run this cq by its absolute path. Config "
            "files are edited in place: other "
            "servers and settings stay as they are; a config that does not parse stops the "
            "install before anything is written. "
            "Files and entries you edited are kept unless --force. Without an agent flag: "
            "Claude Code and Codex."
        ),
    )
    _common(install)
    install.add_argument(
        "--guidance",
        action="store_true",
        help="also add a short marked block to CLAUDE.md / AGENTS.md",
    )
    install.add_argument(
        "--no-mcp",
        dest="mcp",
        action="store_false",
        help="do not register the MCP server (uninstall removes it either way)",
    )
    uninstall = actions.add_parser(
        "uninstall",
        help="remove exactly what install wrote",
        description=(
            "Remove what install wrote, the MCP server registration included; files and "
            "entries you edited stay unless --force. Without an agent flag: every agent."
        ),
    )
    _common(uninstall)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--claude", action="store_true", help="Claude Code")
    p.add_argument("--codex", action="store_true", help="OpenAI Codex")
    p.add_argument("--cursor", action="store_true", help="Cursor (its MCP config)")
    p.add_argument("--gemini", action="store_true", help="Gemini CLI (its MCP config)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--project", action="store_true", help="under the project (default)")
    where.add_argument("--user", action="store_true", help="under the home directory ($HOME)")
    p.add_argument("--root", metavar="DIR", help="project directory (default: current dir)")
    p.add_argument("--force", action="store_true", help="replace or remove edited files too")


def run_agent_command(args: argparse.Namespace) -> int:
    from cq.agent.install import install, uninstall
    from cq.agent.targets import AGENTS, DEFAULT_AGENTS, home_dir, invocation
    from cq.terminal import visible, warn

    if args.agent_command is None:
        raise UsageError("agent needs a subcommand: install or uninstall (see 'cq agent --help')")
    chosen = tuple(a for a in AGENTS if getattr(args, a))
    agents = chosen or (DEFAULT_AGENTS if args.agent_command == "install" else AGENTS)
    if args.user:
        if args.root:
            raise UsageError("--root applies to --project installs, not --user")
        scope, base = "user", home_dir()
    else:
        scope, base = "project", Path(os.path.abspath(args.root or "."))
        if not base.is_dir():
            raise UsageError(f"project directory not found: {base}")
    if args.agent_command == "install":
        actions = install(
            agents, scope, base, guidance=args.guidance, mcp=args.mcp, force=args.force
        )
    else:
        actions = uninstall(agents, scope, base, force=args.force)
    for action in actions:
        note = f"  ({action.note})" if action.note else ""
        print(f"{action.outcome:<12}{visible(action.path)}{note}")  # a name that is not UTF-8
    if not actions:
        print("nothing to do")
    sys.stdout.flush()
    if args.agent_command == "install" and (away := invocation(scope, base).off_path):
        warn(
            f"the project's files run cq from PATH, and this one ({away}) is not on PATH: "
            "put it there (pipx install, uv tool install), or install with --user"
        )
    return 0


def add_mcp_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve the search tool over MCP (stdio)",
        description=(
            "Serve a 'search' tool (and 'stats': the server's counters) over MCP on "
            "stdin/stdout. Searches run in a long-lived "
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
    from cq.agent.mcp_config import ServerConfig

    config = ServerConfig.from_args(args.root, args.max_tokens)  # refused before the SDK loads
    from cq.agent.mcp_server import serve

    serve(config)
    return 0
