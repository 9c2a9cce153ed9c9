"""One ``cq search`` command line, read and run: the same code whether the CLI runs it in its
own process or the server's search process runs it for a client (``cq.server.worker``), so
both print the same bytes and exit with the same code.

``parse_search`` reads a search's words (those after ``search``) with the flags of
``options.py``; ``left_over`` turns what argparse could not place into one ``UsageError`` that
names it (the CLI's other subcommands use it too); ``run_search_args`` runs the parsed search
(a listing or the report); ``exit_code`` turns every failure a user can cause into one
``cq: ...`` line on stderr. Exit codes follow rg: 0 results, 1 none, 2 error.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence

from cq.errors import CqError, UsageError

SEARCH_HELP = (
    "Search Python and Rust code with ripgrep, then classify, rank and report every hit. "
    "QUERY is an identifier, a literal, a regex (with --regex) or '-' to read it from stdin."
)


class CommandParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line, not a usage dump."""

    def error(self, message: str) -> None:  # type: ignore[override]
        unknown = _UNKNOWN_COMMAND.match(message)
        if unknown is not None:
            raise UsageError(_no_such_command(unknown.group(1), self._commands()))
        # ``-weird`` read as ``-w`` with ``eird`` left over: a query, most likely
        hint = (
            "; a query starting with '-' goes after '--'" if "explicit argument" in message else ""
        )
        raise UsageError(f"{message} (see '{self.prog} --help'{hint})")

    def _commands(self) -> list[str]:
        return [
            name
            for action in self._actions
            if isinstance(action, argparse._SubParsersAction)
            for name in action.choices
        ]


_UNKNOWN_COMMAND = re.compile(r"argument command: invalid choice: '(.*?)'")


def _no_such_command(word: str, commands: list[str]) -> str:
    """``cq serch``: the command meant; ``cq register``: rg's habit (``rg PATTERN``), so the
    search it would have been."""
    import difflib
    import shlex

    close = difflib.get_close_matches(word, commands, n=1, cutoff=0.75)
    if close:
        return f"no command {word!r}: did you mean 'cq {close[0]}'? (see 'cq --help')"
    return (
        f"no command {word!r} (commands: {', '.join(commands)}); to search for it: "
        f"cq search {shlex.quote(word)}"
    )


def search_parser() -> CommandParser:
    """The parser of a search's words alone, as ``cq search``'s subparser reads them."""
    from cq.search.options import add_search_options

    parser = CommandParser(prog="cq search", description=SEARCH_HELP, allow_abbrev=False)
    add_search_options(parser)
    parser.set_defaults(command="search", version=False)
    return parser


def parse_search(words: Sequence[str]) -> argparse.Namespace:
    """The words after ``search``, parsed; a ``UsageError`` as ``cq search`` would raise."""
    args, extra = search_parser().parse_known_args(words)
    return left_over(args, extra, list(words))


def left_over(args: argparse.Namespace, extra: list[str], words: list[str]) -> argparse.Namespace:
    """The arguments, or a ``UsageError`` naming the first flag cq does not take (rg's
    ``--pcre2``, ``-U``): said by name, never with the next word, which argparse would have
    taken as the query, and pointing to the subcommand's own help."""
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
        hint = f"; {_RG_NEEDLESS[name]}" if name in _RG_NEEDLESS else hint
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


# rg flags people type out of habit whose meaning cq spells another way: named in the refusal.
_RG_SPELLINGS = {
    "--json": "--format json",
    "-e": "--regex QUERY",
    "--regexp": "--regex QUERY",
    "-u": "--no-ignore",
    "-.": "--hidden",
    "-m": "--max-matches-per-file N",
    "--max-count": "--max-matches-per-file N",
}
# rg flags for what cq does anyway, or never: said instead of a spelling
_RG_NEEDLESS = {
    "-n": "cq prints every finding as file:line:col",
    "--line-number": "cq prints every finding as file:line:col",
    "-S": "cq matches a query as typed; -i for any case",
    "--smart-case": "cq matches a query as typed; -i for any case",
}


def _query_taken_by_a_flag(words: list[str]) -> None:
    """A search left without its query because a word like ``-get_bucket`` was read as a
    short flag with its value attached (``-g et_bucket``, as rg reads it too): say so."""
    from cq.search.options import short_flags_taking_values

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


def run_search_args(args: argparse.Namespace) -> int:
    """Run a parsed search: its file names (``-l``, ``-c``, ``--files``) or its report. A bad
    ``CQ_*`` value is reported by name before any work."""
    from cq.env import check_environment

    check_environment()
    if args.listing != "report":
        from cq.search.listing import run_listing

        return run_listing(args)
    from cq.search.request import run_search_command

    return run_search_command(args)


def exit_code(run: Callable[[], int]) -> int:
    """``run``'s exit code, every failure a user can cause said in one ``cq: ...`` line on
    stderr (exit 2), ^C as 130, a reader gone as 0,
    and never a traceback unless ``CQ_DEBUG`` asks for one."""
    try:
        return run()
    except CqError as exc:
        from cq.terminal import visible

        print("cq: " + visible(str(exc)), file=sys.stderr)  # one line, whatever a path holds
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
