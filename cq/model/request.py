"""What a search is asked to do: the query, its patterns, the limits and the filters."""

from __future__ import annotations

from typing import Literal

import msgspec

QueryMode = Literal["identifier", "literal", "regex"]
LangScope = Literal["auto", "python", "rust"]
Focus = Literal["implementation", "tests", "all"]
PatternKind = Literal["identifier", "literal", "regex"]


class Limits(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Caps enforced while rg streams; a profile TOML file supplies them."""

    max_files: int = 1000
    max_matches_per_file: int = 1000
    max_total_matches: int = 10000
    timeout_seconds: float = 10.0
    max_depth: int = 25
    max_file_size_bytes: int = 2 * 1024 * 1024


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
    explain: bool = False
    progress: bool = False
    semantic: bool = True  # False: --no-semantic (the profile and CQ_SEMANTIC may also say no)
