"""What a search is asked to do: the query, its patterns, the limits and the filters.

A ``SearchRequest`` refuses, when built, a query (or context) that no search can take (empty,
not UTF-8, larger than ``MAX_QUERY_BYTES``): it raises ``cq.errors.UsageError``, so the CLI
and the MCP server report it alike, and check it nowhere else.
"""

from __future__ import annotations

import re
from typing import Literal, TypeVar

import msgspec

from cq.errors import UsageError

# GitHub caps an issue body at 65,536 characters. rg takes a one-line query as one argument,
# escaped to at most twice its bytes, and Linux caps one argument at 128 KiB.
MAX_QUERY_BYTES = 64_000

QueryMode = Literal["identifier", "literal", "regex"]
LangScope = Literal["auto", "python", "rust"]
Focus = Literal["implementation", "tests", "all"]
PatternKind = Literal["identifier", "literal", "regex"]
# What ``cq search`` prints: the report, or (like rg's -l, -c, --files) only file names.
Listing = Literal["report", "paths", "counts", "files"]


class Limits(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Caps enforced while rg streams; a profile TOML file supplies them."""

    max_files: int = 1000
    max_matches_per_file: int = 1000
    max_total_matches: int = 10000
    timeout_seconds: float = 10.0
    max_depth: int = 25
    max_file_size_bytes: int = 2 * 1024 * 1024
    # A rewritten search's caps (a question, an issue text), when higher: its patterns are
    # guesses, some generic, and a cap keeps the first files in path order, cutting a large
    # tree's later half. 112 python_tuning texts over a 2,622-file tree of 7 tuning
    # repositories (bench/studies/scale_localization.py): 36 hit the caps above; at these,
    # none, file Acc@5 60 -> 62, a cold search +0.16 s. The tuning trees never reach either.
    question_max_files: int = 5000
    question_max_total_matches: int = 100_000


class Pattern(msgspec.Struct, frozen=True):
    """One rg pattern. ``source`` is "query" for the user's own text, else the rewriter's name.

    Identifiers are searched word-bounded, literals as fixed strings, regexes as given. The
    weight lets a rewriter say how much a hit on this pattern is worth to the ranking.
    """

    text: str
    kind: PatternKind
    source: str = "query"
    weight: float = 1.0


class SearchRequest(msgspec.Struct, frozen=True, kw_only=True):
    """Everything the pipeline needs; built by the CLI or the MCP server."""

    query: str
    root: str
    mode: QueryMode | None = None  # None: auto-detect
    lang: LangScope = "auto"
    profile: str = "interactive"
    limits: Limits = msgspec.field(default_factory=Limits)
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    in_dir: str | None = None
    hidden: bool = False
    no_ignore: bool = False
    ignore_case: bool = False
    limit: int = 30  # findings shown; 0 = all within the profile's caps
    max_tokens: int = 0  # 0 = no token budget
    focus: Focus | None = None  # None: "all" unless the rewriter says otherwise
    rewrite: bool | None = None  # True force, False forbid, None heuristic
    context: str | None = None
    follow_up: bool = False
    use_cache: bool = True
    use_index: bool = True  # rewritten queries consult the repository index (cq/index)
    explain: bool = False
    listing: Listing = "report"  # "paths", "counts": the result also lists every file's findings
    before_context: int = 0  # lines shown before each shown hit (rg's -B)
    after_context: int = 0  # and after it (rg's -A)
    progress: bool = False
    semantic: bool = True  # False: --no-semantic (the profile and CQ_SEMANTIC may also say no)
    semantic_wait_ms: int = 0  # --semantic-wait: wait for Pyrefly (0: as the profile says)

    def __post_init__(self) -> None:
        if not self.query.strip() and self.listing != "files":  # --files searches nothing
            raise UsageError("empty query")
        _check_text("query", self.query)
        if self.context is not None:
            _check_text("context", self.context)


class Scope(msgspec.Struct, frozen=True, kw_only=True):
    """Which files a search reads and how rg reads them: the request's root (its real path,
    confined once by ``cq.settings.settle``), filters, caps and cache switch. Derived from
    the request once, at the search's front (``Scope.of``); the stages that list, search or
    read the tree take it instead of the request."""

    root: str
    lang: LangScope = "auto"
    in_dir: str | None = None
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    hidden: bool = False
    no_ignore: bool = False
    ignore_case: bool = False
    limits: Limits = msgspec.field(default_factory=Limits)
    use_cache: bool = True

    @classmethod
    def of(cls, request: SearchRequest) -> Scope:
        return _taken(cls, request)


class LadderSettings(msgspec.Struct, frozen=True, kw_only=True):
    """The request's switches of how the ladder climbs (``cq.ladder``), derived once at the
    search's front (``LadderSettings.of``): the focus the user chose, whether the rewrite was
    forced or forbidden, and whether a rewritten search may consult the index."""

    focus: Focus | None = None  # --focus; None: the rewrite's guess, else "all"
    rewrite: bool | None = None  # True: --rewrite, False: --no-rewrite, None: cq decides
    use_index: bool = True  # False: --no-index

    @classmethod
    def of(cls, request: SearchRequest) -> LadderSettings:
        return _taken(cls, request)


class Echo(msgspec.Struct, frozen=True, kw_only=True):
    """What a finished search's report repeats of its request, derived once at the search's
    front (``Echo.of``): the summary's root, language scope and profile; the options a
    follow-up command line repeats to search the same tree the same way (``cq.assemble.
    followups``); the token budget its result is cut to (``cq.assemble.budget``)."""

    query: str  # as typed: a follow-up of the same query repeats it verbatim
    root: str  # its real path (``cq.settings.settle``)
    mode: QueryMode | None = None  # as requested (None: detected, not repeated)
    lang: LangScope = "auto"
    profile: str = "interactive"
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    in_dir: str | None = None
    hidden: bool = False
    no_ignore: bool = False
    ignore_case: bool = False
    focus: Focus | None = None
    limit: int = 30
    max_tokens: int = 0  # 0 = no token budget

    @classmethod
    def of(cls, request: SearchRequest) -> Echo:
        return _taken(cls, request)


_Taken = TypeVar("_Taken", bound=msgspec.Struct)


def _taken(cls: type[_Taken], request: SearchRequest) -> _Taken:
    """``cls`` holding the request's values of its fields: each struct derived at the front
    names its fields as the request does, so one rule copies them all."""
    return cls(**{name: getattr(request, name) for name in cls.__struct_fields__})


# C0 controls and DEL but tab, line breaks and form feed (source files hold those)
_CONTROL = re.compile(r"[\x01-\x08\x0e-\x1f\x7f]")


def _check_text(what: str, text: str) -> None:
    if "\0" in text:
        raise UsageError(f"the {what} contains a NUL byte, which cq cannot search for")
    control = _CONTROL.search(text)
    if control is not None:  # no one types it: a terminal's color codes, a stray byte
        raise UsageError(
            f"the {what} holds a control character (U+{ord(control.group()):04X}), which cq "
            "does not search for: give the text without it"
        )
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate: bytes of the command line or stdin
        raise UsageError(f"the {what} is not valid UTF-8") from None
    if size > MAX_QUERY_BYTES:
        raise UsageError(
            f"the {what} is {size:,} bytes, more than the {MAX_QUERY_BYTES:,} searched: "
            "keep the issue text and the traceback"
        )
