"""``cq search``'s flags, built from ``cq.model.options`` (the table the MCP tool uses too).

Each option's type and default come from its ``SearchRequest`` field: a bool is a switch
(``--no-cache`` turns a default-true field off), a literal a choice, a tuple a repeatable
flag, a number is checked (``minimum``), an option with ``spellings`` a group of flags that
each set one value.
"""

from __future__ import annotations

import argparse
import threading
import types
import typing
from typing import Any, Literal

from cq.model.options import LIMIT_FLAGS, SEARCH_OPTIONS, SearchOption, option_default, option_type

# The CLI's own defaults where they differ from the request's: the root and the format come
# from the environment when no flag gives them, and -A/-B left out yield to -C
# (``request.py``).
_CLI_DEFAULTS: dict[str, Any] = {
    "root": None,
    "format": None,
    "after_context": None,
    "before_context": None,
}


def add_search_options(parser: argparse.ArgumentParser) -> None:
    groups = {name: parser.add_argument_group(name) for name in ("where", "how", "output")}
    for option in SEARCH_OPTIONS:
        if not option.cli:
            continue
        if option.name == "query":
            # optional to argparse: ``--files`` takes none; ``request.py`` asks for it otherwise
            parser.add_argument("query", metavar="QUERY", nargs="?", help=option.help)
            parser.add_argument("path", metavar="PATH", nargs="?", help=_PATH_HELP)
            continue
        _add(groups[option.group], option)
        if option.name == "profile":
            for limit in LIMIT_FLAGS:
                kind = _seconds if limit.seconds else _positive_int
                groups["how"].add_argument(
                    limit.flag, dest=limit.field, type=kind, metavar=limit.metavar, help=limit.help
                )


# rg's ``rg PATTERN PATH``: the CLI's alone (an MCP server searches its own root), settled
# into the root and ``in_dir`` by ``request.searched_path``.
_PATH_HELP = (
    "a directory or file to search, as rg takes it: inside the root, only it (as --in); "
    "elsewhere, the root"
)


def _add(group: Any, option: SearchOption) -> None:
    default = _CLI_DEFAULTS.get(option.name, option_default(option))
    kind = option_type(option)
    if option.spellings:
        exclusive = group.add_mutually_exclusive_group()
        for spelling in option.spellings:
            exclusive.add_argument(
                *spelling.flags,
                dest=option.name,
                action="store_const",
                const=spelling.value,
                default=default,
                help=spelling.help,
            )
        return
    named: dict[str, Any] = {"dest": option.name, "help": option.help}
    if kind is bool:
        action = "store_false" if default else "store_true"
        group.add_argument(*option.flags, action=action, **named)
        return
    if option.metavar:
        named["metavar"] = option.metavar
    choices = _choices(kind)
    if choices and option.aliases:  # offered as choices too (help, completions)
        aliases = option.aliases
        named["type"] = lambda text: aliases.get(text, text)
        choices = (*choices, *aliases)
    if choices:
        group.add_argument(*option.flags, choices=choices, default=default, **named)
    elif typing.get_origin(kind) is tuple:
        group.add_argument(*option.flags, action="append", default=[], **named)
    elif kind is int:
        check = _non_negative_int if option.minimum == 0 else _positive_int
        group.add_argument(*option.flags, type=check, default=default, **named)
    else:
        group.add_argument(*option.flags, default=default, **named)


def short_flags_taking_values() -> frozenset[str]:
    """``-g``, ``-t``, ``-A``, ...: the short flags of ``cq search`` that take a value, which
    argparse (as rg) reads attached too (``-gGLOB``)."""
    flags = {
        flag
        for option in SEARCH_OPTIONS
        if option.cli and not option.spellings and option_type(option) is not bool
        for flag in option.flags
    }
    flags |= {limit.flag for limit in LIMIT_FLAGS}
    return frozenset(f for f in flags if len(f) == 2 and f[0] == "-" and f[1] != "-")


def _choices(kind: Any) -> tuple[Any, ...] | None:
    """The values of a ``Literal`` (or an optional one), else None."""
    args = typing.get_args(kind)
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        kind = next(a for a in args if a is not type(None))
        args = typing.get_args(kind)
    return args if typing.get_origin(kind) is Literal else None


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
