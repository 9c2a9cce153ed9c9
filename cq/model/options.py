"""Every search option, declared once: the CLI's flags, the MCP tool's arguments and the
``SearchRequest`` they fill all come from ``SEARCH_OPTIONS``.

Each option names its ``SearchRequest`` field; the field gives its type and default, the
table gives how each front end spells and explains it. ``format`` is the one option that is
not part of the request (it says how to print the result, not what to search).
"""

from __future__ import annotations

import functools
import typing
from typing import Any, Literal

import msgspec

from cq.model.request import SearchRequest

Group = Literal["where", "how", "output"]

# An MCP call's least token budget (``cq.agent.budget``): below it even a markdown summary does
# not fit, so a smaller ``max_tokens`` counts as this; the tool's description says so.
MCP_MIN_TOKENS = 300


class Spelling(msgspec.Struct, frozen=True):
    """One CLI flag of an option whose flags each set a fixed value (``--regex``)."""

    flags: tuple[str, ...]
    value: Any
    help: str


class SearchOption(msgspec.Struct, frozen=True, kw_only=True):
    """One option. ``flags`` spell it on the CLI (none: ``QUERY``, or MCP only);
    ``spellings`` instead give one flag per fixed value; ``mcp`` exposes it as an MCP tool
    argument, described by ``mcp_help`` when the server means it differently."""

    name: str
    help: str
    group: Group = "how"
    flags: tuple[str, ...] = ()
    metavar: str | None = None
    spellings: tuple[Spelling, ...] = ()
    cli: bool = True
    mcp: bool = True
    mcp_help: str | None = None
    mcp_optional: bool = False  # the MCP argument may be left out (None): the server decides
    mcp_name: str | None = None  # the MCP argument's name, ``no_<x>``: it says the opposite
    minimum: int | None = None  # whole numbers: the smallest allowed
    mcp_minimum: int | None = None  # the same over MCP, where it differs
    aliases: dict[str, str] = {}  # other words for a choice (``-t py``: ``python``)


SEARCH_OPTIONS: tuple[SearchOption, ...] = (
    SearchOption(
        name="query",
        help="what to search for; '-' reads stdin",
        mcp_help="what to search for, taken as given ('-' is searched as text)",
    ),
    SearchOption(
        name="root",
        group="where",
        flags=("--root",),
        help="repository root (default: $CQ_ROOT or the current dir)",
        mcp_help="the server's root (the default); any other root is refused",
        mcp_optional=True,
    ),
    SearchOption(
        name="in_dir",
        group="where",
        flags=("--in",),
        metavar="PATH",
        help="only this directory or file of the root",
    ),
    SearchOption(
        name="include",
        group="where",
        flags=("--include", "-g", "--glob"),
        metavar="GLOB",
        help="only paths matching, as rg's -g: repeatable, '!GLOB' leaves paths out, a later "
        "glob wins over an earlier one",
        mcp_help="globs as rg's -g takes them: only paths matching are searched, '!GLOB' "
        "leaves paths out, a later glob wins over an earlier one",
    ),
    SearchOption(
        name="exclude",
        group="where",
        flags=("--exclude",),
        metavar="GLOB",
        help="skip paths matching (repeatable; over any --include)",
        mcp_help="globs of paths to leave out, whatever include says",
    ),
    SearchOption(
        name="lang",
        group="where",
        flags=("--lang", "-t", "--type"),
        help="auto: both (default); py and rs as with rg's -t",
        mcp_help="auto: both (default)",
        aliases={"py": "python", "rs": "rust"},
    ),
    SearchOption(name="hidden", group="where", flags=("--hidden",), help="search hidden files too"),
    SearchOption(
        name="no_ignore", group="where", flags=("--no-ignore",), help="do not respect .gitignore"
    ),
    SearchOption(
        name="mode",
        help="default: decided from the query",
        spellings=(
            Spelling(("--regex",), "regex", "QUERY is a regex"),
            Spelling(("--literal", "-F"), "literal", "fixed string"),
            Spelling(
                ("--identifier", "-w"),
                "identifier",
                "whole word (default for names; otherwise the mode is detected)",
            ),
        ),
    ),
    SearchOption(name="ignore_case", flags=("--ignore-case", "-i"), help="case-insensitive match"),
    SearchOption(
        name="rewrite",
        help="rewrite natural language into patterns: true force, false never",
        spellings=(
            Spelling(
                ("--rewrite",),
                True,
                "rewrite the query into identifier/literal patterns (LLM if reachable, "
                "else offline)",
            ),
            Spelling(("--no-rewrite",), False, "never rewrite"),
        ),
    ),
    SearchOption(
        name="context",
        flags=("--context",),
        metavar="TEXT",
        help="earlier conversation: what 'it' or 'that' refers to",
    ),
    SearchOption(
        name="follow_up",
        flags=("--follow-up",),
        help="remember this search's answer per root; resolve 'it' from the previous one",
    ),
    SearchOption(
        name="profile",
        flags=("--profile",),
        help=(
            "interactive (default), default, audit, literal, a profile of your own "
            "($XDG_CONFIG_HOME/cq/profiles/NAME.toml), or a TOML file inside the root"
        ),
        mcp_help=(
            "search-limit preset: interactive, default, audit, literal or one of the user's "
            "own by name; or a .toml file inside the root"
        ),
    ),
    SearchOption(
        name="use_cache",
        flags=("--no-cache",),
        help="neither read nor write the persistent cache",
        mcp=False,
    ),
    SearchOption(
        name="semantic",
        flags=("--no-semantic",),
        help="do not ask Pyrefly's language server about the shown Python hits",
        mcp=False,
    ),
    SearchOption(
        name="semantic_wait_ms",
        flags=("--semantic-wait",),
        metavar="MS",
        minimum=0,
        help="wait up to MS for Pyrefly's answers missing from the cache and show those that "
        "came (default: show the cached ones, and a long-lived cq asks for the rest)",
        mcp=False,
    ),
    SearchOption(
        name="use_index",
        flags=("--no-index",),
        help="a rewritten question does not consult (or build) the repository index",
        mcp_name="no_index",
        mcp_help="a rewritten question does not consult the repository index",
    ),
    SearchOption(
        name="format", group="output", flags=("--format",), help="default md (or $CQ_FORMAT)"
    ),
    SearchOption(
        name="color",
        group="output",
        flags=("--color",),
        help="colour the markdown report and -l/-c/--files paths: auto (default) only at a "
        "terminal without $NO_COLOR",
        mcp=False,
    ),
    SearchOption(
        name="listing",
        group="output",
        help="print the report, or only the files",
        mcp=False,
        spellings=(
            Spelling(
                ("--files-with-matches", "-l"),
                "paths",
                "only the files with findings, best first, one per line",
            ),
            Spelling(("--count", "-c"), "counts", "only each file's findings: PATH:N, best first"),
            Spelling(
                ("--files",), "files", "only the files cq would search (no QUERY; a PATH as rg)"
            ),
        ),
    ),
    SearchOption(
        name="after_context",
        group="output",
        flags=("--after-context", "-A"),
        metavar="N",
        minimum=0,
        help="show N lines after each shown hit",
        mcp=False,
    ),
    SearchOption(
        name="before_context",
        group="output",
        flags=("--before-context", "-B"),
        metavar="N",
        minimum=0,
        help="show N lines before each shown hit",
        mcp=False,
    ),
    SearchOption(
        name="context_lines",
        group="output",
        flags=("--context-lines", "-C"),
        metavar="N",
        minimum=0,
        help="show N lines before and after each shown hit (-A, -B win; --context is "
        "the conversation)",
        mcp=False,
    ),
    SearchOption(
        name="limit",
        group="output",
        flags=("--limit",),
        minimum=0,
        help="findings shown (default 30; 0 = all)",
        mcp_help="findings shown; 0 = all",
    ),
    SearchOption(
        name="max_tokens",
        group="output",
        flags=("--max-tokens",),
        metavar="N",
        minimum=0,
        help="approximate token budget of the report (default 0: none): lowest-ranked findings"
        " are dropped to fit",
        mcp_help=(
            f"token budget of this answer (at least {MCP_MIN_TOKENS}: a smaller one counts "
            "as that; capped by the server's)"
        ),
        mcp_optional=True,
        mcp_minimum=1,
    ),
    SearchOption(
        name="focus",
        group="output",
        flags=("--focus",),
        help="demote (never hide) hits outside the focus: tests, or implementation",
    ),
    SearchOption(
        name="explain",
        group="output",
        flags=("-v", "--explain"),
        help="show the score breakdown of every finding",
        mcp_help="show each finding's score breakdown",
    ),
)


class LimitFlag(msgspec.Struct, frozen=True):
    """A CLI flag that overrides one of the profile's ``Limits`` for one search."""

    flag: str
    field: str  # of ``Limits``
    metavar: str
    help: str | None = None
    seconds: bool = False  # a positive number of seconds, else a positive whole number


LIMIT_FLAGS: tuple[LimitFlag, ...] = (
    LimitFlag("--max-files", "max_files", "N", "override the profile"),
    LimitFlag("--max-matches-per-file", "max_matches_per_file", "N"),
    LimitFlag("--max-total-matches", "max_total_matches", "N"),
    LimitFlag(
        "--timeout",
        "timeout_seconds",
        "SECONDS",
        "stop rg after this many seconds (default: the profile's timeout_seconds)",
        seconds=True,
    ),
    LimitFlag("--max-depth", "max_depth", "N", "directory depth"),
    LimitFlag("--max-filesize", "max_file_size_bytes", "BYTES"),
)

OutputFormat = Literal["md", "json"]
ColorChoice = Literal["auto", "always", "never"]
FORMAT_DEFAULT: OutputFormat = "md"

# The options that are not request fields, with their type and default: how the result is
# printed, and ``-C``, which the front end settles into the request's two context widths.
NOT_IN_REQUEST: dict[str, tuple[Any, Any]] = {
    "format": (OutputFormat, FORMAT_DEFAULT),
    "color": (ColorChoice, "auto"),
    "context_lines": (int, 0),
}


def option_type(option: SearchOption) -> Any:
    """The option's type: its ``SearchRequest`` field's, or ``NOT_IN_REQUEST``'s."""
    if option.name in NOT_IN_REQUEST:
        return NOT_IN_REQUEST[option.name][0]
    return _request_types()[option.name]


def option_default(option: SearchOption) -> Any:
    """The option's default: its ``SearchRequest`` field's (``query``: none)."""
    if option.name in NOT_IN_REQUEST:
        return NOT_IN_REQUEST[option.name][1]
    field = _request_fields()[option.name]
    if field.default is not msgspec.NODEFAULT:
        return field.default
    if field.default_factory is not msgspec.NODEFAULT:
        return field.default_factory()
    return msgspec.NODEFAULT


# Resolved once: every search builds its options from them, and resolving the annotations for
# each of ~40 options cost ~20 ms of every cq start.
@functools.cache
def _request_types() -> dict[str, Any]:
    return typing.get_type_hints(SearchRequest)


@functools.cache
def _request_fields() -> dict[str, msgspec.structs.FieldInfo]:
    return {f.name: f for f in msgspec.structs.fields(SearchRequest)}


def request_default(name: str) -> Any:
    """A ``SearchRequest`` field's default (what a follow-up command need not repeat)."""
    return option_default(next(o for o in SEARCH_OPTIONS if o.name == name))


def tool_arguments() -> list[tuple[str, Any, Any]]:
    """The MCP tool's arguments, ``(name, type, default)`` (``NODEFAULT``: required): each
    option it takes, with its request type and default, or ``T | None`` defaulting to None
    where the server decides (``mcp_optional``); an ``mcp_name`` argument is the opposite
    switch of its field."""
    out: list[tuple[str, Any, Any]] = []
    for option in SEARCH_OPTIONS:
        if option.mcp:
            kind, default = option_type(option), option_default(option)
            if option.mcp_optional:
                kind, default = kind | None, None
            if option.mcp_name:
                default = not default
            out.append((option.mcp_name or option.name, kind, default))
    return out


def request_fields(arguments: dict[str, Any]) -> dict[str, Any]:
    """MCP tool arguments as ``SearchRequest`` fields (``no_index`` -> ``use_index``)."""
    fields = dict(arguments)
    for option in SEARCH_OPTIONS:
        if option.mcp_name and option.mcp_name in fields:
            fields[option.name] = not fields.pop(option.mcp_name)
    return fields
