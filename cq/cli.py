"""Command line: ``cq search``, and the other subcommands, on argparse.

Every failure a user can cause ends in one ``cq: ...`` line on stderr and exit 2.
Exit codes follow rg: 0 results, 1 none, 2 error.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from collections.abc import Sequence

from cq.errors import CqError, UsageError


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line, not a usage dump."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see '{self.prog} --help')")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="cq", description="Code search that understands code.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    _add_search(sub.add_parser("search", help="search code", description=_SEARCH_HELP))
    from cq.cli_agent import add_agent_parser
    from cq.cli_cache import add_cache_parser
    from cq.cli_index import add_index_parser
    from cq.cli_mcp import add_mcp_parser

    add_agent_parser(sub)
    add_mcp_parser(sub)
    add_cache_parser(sub)
    add_index_parser(sub)
    sub.add_parser(
        "schema", help="print the JSON Schema of the search result", description=_SCHEMA_HELP
    )
    return parser


_SCHEMA_HELP = "Print the JSON Schema of what 'cq search --format json' prints."


_SEARCH_HELP = (
    "Search Python and Rust code with ripgrep, then classify, rank and report every hit. "
    "QUERY is an identifier, a literal, a regex (with --regex) or '-' to read it from stdin."
)


def _add_search(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", metavar="QUERY", help="what to search for; '-' reads stdin")
    where = p.add_argument_group("where")
    where.add_argument("--root", help="repository root (default: $CQ_ROOT or the current dir)")
    where.add_argument("--in", dest="in_dir", metavar="DIR", help="only this subtree of the root")
    where.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="GLOB",
        help="only paths matching (repeatable)",
    )
    where.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="skip paths matching (repeatable)",
    )
    where.add_argument(
        "--lang", choices=("auto", "python", "rust"), default="auto", help="auto: both (default)"
    )
    where.add_argument("--hidden", action="store_true", help="search hidden files too")
    where.add_argument("--no-ignore", action="store_true", help="do not respect .gitignore")
    how = p.add_argument_group("how")
    mode = how.add_mutually_exclusive_group()
    mode.add_argument(
        "--regex", dest="mode", action="store_const", const="regex", help="QUERY is a regex"
    )
    mode.add_argument(
        "--literal", "-F", dest="mode", action="store_const", const="literal", help="fixed string"
    )
    mode.add_argument(
        "--identifier",
        "-w",
        dest="mode",
        action="store_const",
        const="identifier",
        help="whole word (default for names; otherwise the mode is detected)",
    )
    how.add_argument("--ignore-case", "-i", action="store_true", help="case-insensitive match")
    nl = how.add_mutually_exclusive_group()
    nl.add_argument(
        "--rewrite",
        dest="rewrite",
        action="store_const",
        const=True,
        default=None,
        help="rewrite the query into identifier/literal patterns (LLM if reachable, else offline)",
    )
    nl.add_argument(
        "--no-rewrite", dest="rewrite", action="store_const", const=False, help="never rewrite"
    )
    how.add_argument(
        "--context", metavar="TEXT", help="earlier conversation: what 'it' or 'that' refers to"
    )
    how.add_argument(
        "--follow-up",
        action="store_true",
        help="remember this search's answer per root; resolve 'it' from the previous one",
    )
    how.add_argument(
        "--profile",
        default="interactive",
        help="interactive (default), default, audit, literal, or a TOML file path",
    )
    how.add_argument("--max-files", type=_positive_int, metavar="N", help="override the profile")
    how.add_argument("--max-matches-per-file", type=_positive_int, metavar="N")
    how.add_argument("--max-total-matches", type=_positive_int, metavar="N")
    how.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="stop rg after this many seconds (default: the profile's timeout_seconds)",
    )
    how.add_argument("--max-depth", type=_positive_int, metavar="N", help="directory depth")
    how.add_argument("--max-filesize", type=_positive_int, metavar="BYTES")
    how.add_argument(
        "--no-cache", action="store_true", help="neither read nor write the persistent cache"
    )
    how.add_argument(
        "--no-semantic",
        action="store_true",
        help="do not ask Pyrefly's language server about the shown Python hits",
    )
    how.add_argument(
        "--no-index",
        action="store_true",
        help="a rewritten question does not consult (or build) the repository index",
    )
    out = p.add_argument_group("output")
    out.add_argument(
        "--format", choices=("md", "json"), default=None, help="default md (or $CQ_FORMAT)"
    )
    out.add_argument(
        "--limit", type=_non_negative_int, default=30, help="findings shown (default 30; 0 = all)"
    )
    out.add_argument(
        "--max-tokens",
        type=_non_negative_int,
        default=0,
        metavar="N",
        help="approximate token budget of the report: lowest-ranked findings are dropped to fit",
    )
    out.add_argument(
        "--focus",
        choices=("implementation", "tests", "all"),
        default=None,
        help="demote (never hide) hits outside the focus: tests, or implementation",
    )
    out.add_argument(
        "-v", "--explain", action="store_true", help="show the score breakdown of every finding"
    )


def _positive_int(text: str) -> int:
    value = _non_negative_int(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text}")
    return value


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {text}")
    return value


def _seconds(text: str) -> float:
    """A positive finite number of seconds, as a profile's ``timeout_seconds``: the watchdog
    is a timer, and ``inf`` or ``nan`` crashed it (issue 13)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text}") from None
    if not 0 < value <= threading.TIMEOUT_MAX:  # false for nan too
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds: {text}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    try:
        args = build_parser().parse_args(argv)
        if args.version:
            from cq import __version__

            print(f"cq {__version__}")
            return 0
        if args.command in ("search", "mcp"):
            from cq.env import check_environment

            check_environment()  # a bad CQ_* value is reported by name before any work
        if args.command == "search":
            from cq.cli_search import run_search_command

            return run_search_command(args)
        if args.command == "agent":
            from cq.cli_agent import run_agent_command

            return run_agent_command(args)
        if args.command == "mcp":
            from cq.cli_mcp import run_mcp_command

            return run_mcp_command(args)
        if args.command == "cache":
            from cq.cli_cache import run_cache_command

            return run_cache_command(args)
        if args.command == "index":
            from cq.cli_index import run_index_command

            return run_index_command(args)
        if args.command == "schema":
            from cq.cli_schema import print_schema

            return print_schema()
        build_parser().print_help()
        return 2
    except CqError as exc:
        print(f"cq: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        _silence_broken_pipe()
        return 0
    except Exception as exc:  # the last line of defence: never a traceback by default
        if os.environ.get("CQ_DEBUG"):
            raise
        print(
            f"cq: internal error: {type(exc).__name__}: {exc} (CQ_DEBUG=1 shows more)",
            file=sys.stderr,
        )
        return 2


def _silence_broken_pipe() -> None:
    """After the reader went away, make interpreter shutdown not complain about stdout."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass
