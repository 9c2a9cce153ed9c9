"""A ranked, reportable hit: the raw match, its classification, enrichment and score."""

from __future__ import annotations

from collections import Counter

import msgspec

from cq.model.classification import Category, SymbolFlags, Tier
from cq.model.enrichment import Enrichment
from cq.model.match import ContextLine, Language, LineWindow
from cq.model.ranking import Role


class ScoreBreakdown(msgspec.Struct, frozen=True, kw_only=True):
    """Why a finding scored what it did (shown with ``--explain``).

    ``score = category_weight x role_multiplier x confidence x focus_multiplier x boosts -
    depth_penalty`` (never below 0), where ``boosts = exact_definition x filename x terms x
    name_cut`` (``name_cut``: the hit starts or ends inside a longer name).
    For a dotted query (``ABCMeta.register``) ``exact_definition`` is the hit's relation to the
    dotted name instead: its definition, a use with a plausible receiver, or neither
    (``cq.rank.dotted``).
    """

    category_weight: float = 1.0
    role_multiplier: float = 1.0
    confidence: float = 1.0
    focus_multiplier: float = 1.0
    boosts: float = 1.0
    exact_definition: float = 1.0
    filename: float = 1.0
    terms: float = 1.0
    name_cut: float = 1.0
    depth_penalty: float = 0.0
    # A rewritten query's file order fuses rg's with the repository index's (cq/index/fuse.py):
    # the file's rank in each (0: not found by that signal) and its fused score.
    file_rank_rg: int = 0
    file_rank_index: int = 0
    file_fused: float = 0.0
    # A file a Python question points at: its rank among the files the text names (traceback
    # frames, paths, modules) and among those defining a name the text writes as code (0: not
    # among them). Unset (left out of JSON) for every other breakdown, so they keep their
    # fields; one type, so the ranks survive every encoding (the MCP server's workers).
    file_rank_named: int | msgspec.UnsetType = msgspec.UNSET
    file_rank_defined: int | msgspec.UnsetType = msgspec.UNSET
    # The tuned weights of that fusion: "index.python" or "index.fusion" (Tuning.index).
    file_fusion: str | msgspec.UnsetType = msgspec.UNSET


class Tally(msgspec.Struct, frozen=True, kw_only=True):
    """Counts over all of a search's findings, shown or not: what a report's totals say
    without every finding held as a ``Finding`` (an audit search has tens of thousands)."""

    total: int = 0
    categories: dict[str, int] = {}  # findings per category
    roles: dict[str, int] = {}  # findings per item role
    files: dict[str, int] = {}  # findings per file
    files_in_rank_order: tuple[str, ...] = ()  # each file once, in the order of its best finding
    # A callers question's calls of the names it asks about that are not shown (each scored,
    # in rank order): its Answer counts every direct call in the tree, not the shown ones only
    calls: tuple[Finding, ...] = ()
    # A usage question's uses of the kind it asks for, shown or not (``cq.rank.is_use_site``):
    # its Answer's count (through a dotted name's owner, only those)
    uses: int = 0
    # and the files importing its dotted name's member from its owner (``with_importers``)
    importers: frozenset[str] = frozenset()

    @classmethod
    def of(cls, ranked: list[Finding]) -> Tally:
        """The tally of findings already in their final order."""
        return cls(
            total=len(ranked),
            categories=dict(Counter(f.category for f in ranked)),
            roles=dict(Counter(f.role for f in ranked)),
            files=dict(Counter(f.file for f in ranked)),
            files_in_rank_order=tuple(dict.fromkeys(f.file for f in ranked)),
        )


class Finding(msgspec.Struct, frozen=True, kw_only=True):
    """One hit as reported. Field order is the JSON order; ``line_window`` appears only for
    a long line shortened to a window around the match (see ``LineWindow``), the context
    lines only when asked for (``-B``, ``-A``)."""

    file: str
    line: int
    col: int
    end_col: int
    text: str
    line_text: str
    line_window: LineWindow | msgspec.UnsetType = msgspec.UNSET
    context_before: tuple[ContextLine, ...] | msgspec.UnsetType = msgspec.UNSET
    context_after: tuple[ContextLine, ...] | msgspec.UnsetType = msgspec.UNSET
    language: Language
    category: Category
    confidence: float
    tier: Tier = "fallback"
    node_kind: str | None = None
    containing_scope: str | None = None
    role: Role = "src"
    score: float = 0.0
    patterns: tuple[int, ...] = ()
    symtable: SymbolFlags | None = None
    enrichment: Enrichment | None = None
    explain: ScoreBreakdown | None = None

    @property
    def scope_unknown(self) -> bool:
        """Nothing read where the hit sits: its category was decided from its line alone
        (tier "heuristic": a file not parsed, or one the lexer alone decided) and no parse
        of a shown Python hit's file (enrichment's) gave its scope since; ``containing_scope``
        None then says nothing of where it is, not "module level"."""
        if self.containing_scope is not None or self.tier != "heuristic":
            return False
        return self.language != "python" or not scope_read(self.enrichment)


def scope_read(enrichment: Enrichment | None) -> bool:
    """Whether a parse of the hit's file read its scope chain (ast-grep or tree-sitter)."""
    stages = enrichment.stages if enrichment is not None else None
    return stages is not None and "applied" in (stages.ast_grep, stages.tree_sitter)
