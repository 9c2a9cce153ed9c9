"""Command line: ``cq search``, and the other subcommands, on argparse.

Every failure a user can cause ends in one ``cq: ...`` line on stderr and exit 2.
Exit codes follow rg: 0 results, 1 none, 2 error.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import sys
from collections.abc import Sequence

from cq.errors import CqError, PatternError, UsageError


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line, not a usage dump."""

    def error(self, message: str) -> None:  # type: ignore[override]
        # ``-weird`` read as ``-w`` with ``eird`` left over: a query, most likely
        hint = (
            "; a query starting with '-' goes after '--'" if "explicit argument" in message else ""
        )
        raise UsageError(f"{message} (see '{self.prog} --help'{hint})")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="cq", description="Code search that understands code.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    from cq.cli_options import add_search_options

    # No abbreviations: rg's --ignore would otherwise be taken for --ignore-case.
    search = sub.add_parser(
        "search", help="search code", description=_SEARCH_HELP, allow_abbrev=False
    )
    add_search_options(search)
    from cq.cli_agent import add_agent_parser
    from cq.cli_cache import add_cache_parser
    from cq.cli_embed import add_embed_parser
    from cq.cli_index import add_index_parser
    from cq.cli_mcp import add_mcp_parser
    from cq.cli_server import add_server_parser

    add_agent_parser(sub)
    add_mcp_parser(sub)
    add_cache_parser(sub)
    add_index_parser(sub)
    add_embed_parser(sub)
    add_server_parser(sub)
    sub.add_parser(
        "schema", help="print the JSON Schema of the search result", description=_SCHEMA_HELP
    )
    from cq.cli_completions import add_completions_parser

    add_completions_parser(sub)
    return parser


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The arguments, or a ``UsageError`` naming the first flag cq does not take (rg's
    ``--pcre2``, ``-U``): said by name, never with the next word, which argparse would have
    taken as the query, and pointing to the subcommand's own help."""
    args, extra = build_parser().parse_known_args(argv)
    words = list(sys.argv[1:] if argv is None else argv)
    if getattr(args, "query", "") is None and getattr(args, "listing", None) != "files":
        _query_taken_by_a_flag(words)
    if "--" in extra:  # left by argparse once QUERY had its word: ``cq search Q -l -- PATH``
        extra.remove("--")
    if not extra:
        return args
    where = f"cq {args.command}" if args.command else "cq"
    flag = next((word for word in extra if word.startswith("-") and word != "-"), None)
    if flag is not None and "--" in words and words.index("--") < words.index(flag):
        raise UsageError(f"unexpected argument {flag!r} after '--': flags go before it")
    if flag is not None:
        name = flag.split("=", 1)[0] if flag.startswith("--") else flag  # ``--flag=value``
        hint = f"; cq's is {_RG_SPELLINGS[name]}" if name in _RG_SPELLINGS else ""
        if _word_like(name):  # ``-foo`` is more likely a query than a flag
            hint = "; a query starting with '-' goes after '--'"
        raise UsageError(f"{where} does not take {name} (see '{where} --help'{hint})")
    if args.command == "search" and args.query is not None and args.path is None:
        # ``cq search QUERY -l PATH``: argparse gives PATH no word once a flag follows QUERY
        args.path, extra = extra[0], extra[1:]
        if not extra:
            return args
    word = extra[0]
    path = getattr(args, "path", None)  # ``cq search QUERY PATH``: the word after the query
    if path is not None and not os.path.exists(path):
        word = path
    elif path is not None and os.path.exists(word):
        raise UsageError(f"{where} takes one PATH: name more with --include GLOB")
    if args.command != "search":  # only a search has a query to quote
        raise UsageError(f"unexpected argument {word!r} (see '{where} --help')")
    raise UsageError(
        f"unexpected argument {word!r}: quote a query with spaces (see '{where} --help')"
    )


_SCHEMA_HELP = "Print the JSON Schema of what 'cq search --format json' prints."


_SEARCH_HELP = (
    "Search Python and Rust code with ripgrep, then classify, rank and report every hit. "
    "QUERY is an identifier, a literal, a regex (with --regex) or '-' to read it from stdin."
)


# rg flags people type out of habit whose meaning cq spells another way: named in the refusal.
_RG_SPELLINGS = {
    "--json": "--format json",
    "-e": "--regex QUERY",
    "--regexp": "--regex QUERY",
    "-u": "--no-ignore",
    "-.": "--hidden",
}


def _query_taken_by_a_flag(words: list[str]) -> None:
    """A search left without its query because a word like ``-get_bucket`` was read as a
    short flag with its value attached (``-g et_bucket``, as rg reads it too): say so."""
    from cq.cli_options import short_flags_taking_values

    taking = short_flags_taking_values()
    for word in words[: words.index("--")] if "--" in words else words:
        if len(word) > 2 and word[:2] in taking and not word.startswith("--"):
            raise UsageError(
                f"cq search read {word} as {word[:2]} {word[2:]!r} and has no QUERY: "
                f"a query starting with '-' goes after '--' (cq search -- {word})"
            )


def _word_like(flag: str) -> bool:
    """``-foo`` or ``->`` (a query the guide names) is no flag's shape (``-x``, ``--name``)."""
    return flag not in _RG_SPELLINGS and _FLAG_SHAPE.fullmatch(flag) is None


_FLAG_SHAPE = re.compile(r"-[A-Za-z0-9]|--[A-Za-z][\w-]*")


def entry() -> None:
    """``cq`` and ``python -m cq``: run, then exit without the interpreter's last garbage
    collections. Their cost grows with what a search left alive (the semantic stage's syntax
    reading keeps parsed modules): a one-shot ``getLogger`` search of the stdlib spent 0.6-1.3 s
    after its output in them (load 4-8; ``gc.collect()`` there: 2-4 s wall); frozen, the
    objects are still freed at exit, only no longer walked for cycles."""
    from cq.server.client import run_through_server

    _fill_closed_stdio()
    if sys.stdout is None:  # started with fd 1 closed (``cq ... >&-``): Python has no stdout
        if sys.stderr is not None:
            sys.stderr.write("cq: standard output is closed: there is nowhere to write to\n")
        raise SystemExit(2)
    code = run_through_server(sys.argv[1:])  # None: this process searches (cq.server)
    if code is None:
        code = main()
    sys.stdout.flush()
    gc.freeze()
    raise SystemExit(code)


def _fill_closed_stdio() -> None:
    """A closed stdin or stderr (``cq ... <&-``, ``2>&-``) is ``/dev/null`` underneath: the
    next file cq opened would take its number, which rg and every child inherit as their
    stdin or stderr. A closed stderr also gets a stream: Python starts with none (every
    ``print(file=sys.stderr)`` would go to stdout, every ``sys.stderr.isatty()`` fail). A
    closed stdin keeps none, so ``cq search -`` still says there is no stdin."""
    for fd in (0, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:  # fd 0 closed too: /dev/null took that number first
                os.dup2(null, fd)
                os.close(null)
    if sys.stderr is None:
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    try:
        args = parse(argv)
        if args.version:
            from cq import __version__

            print(f"cq {__version__}")
            return 0
        if args.command in ("search", "mcp"):
            from cq.env import check_environment

            check_environment()  # a bad CQ_* value is reported by name before any work
        if args.command == "search" and args.listing != "report":  # -l, -c, --files
            from cq.cli_listing import run_listing

            return run_listing(args)
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
        if args.command == "embed":
            from cq.cli_embed import run_embed_command

            return run_embed_command(args)
        if args.command == "server":
            from cq.cli_server import run_server_command

            return run_server_command(args)
        if args.command == "schema":
            from cq.cli_schema import print_schema

            return print_schema()
        if args.command == "completions":
            from cq.cli_completions import print_completions

            return print_completions(args, build_parser())
        build_parser().print_help()
        return 2
    except CqError as exc:
        from cq.terminal import visible

        # one line, whatever a quoted path holds; a pattern error keeps rg's caret lines
        lines = str(exc).split("\n") if isinstance(exc, PatternError) else [str(exc)]
        print("cq: " + "\n".join(visible(line) for line in lines), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        _silence_broken_pipe()
        return 0
    except Exception as exc:  # the last line of defence: never a traceback by default
        if os.environ.get("CQ_DEBUG"):
            raise
        if isinstance(exc, FileNotFoundError) and _cwd_gone():  # '.' and relative paths
            print(
                "cq: the current directory no longer exists: cd to one, or name the root with "
                "--root (absolute paths only)",
                file=sys.stderr,
            )
            return 2
        print(
            f"cq: internal error: {type(exc).__name__}: {exc} (CQ_DEBUG=1 shows more)",
            file=sys.stderr,
        )
        return 2


def _cwd_gone() -> bool:
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    return False


def _silence_broken_pipe() -> None:
    """After the reader went away, make interpreter shutdown not complain about stdout."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass
