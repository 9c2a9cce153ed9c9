"""Shared data types: the narrow interface between pipeline stages.

Everything here is a frozen ``msgspec.Struct`` and imports nothing else of cq, so every
stage (candidates, classify, enrich, rank, report, rewrite) can depend on it. Open
``request.py`` first: a ``SearchRequest`` goes in, a ``SearchResult`` (``result.py``) comes out.
"""

from cq.model.classification import Category, Classification, SymbolFlags, Tier
from cq.model.enrichment import (
    Agreement,
    Binding,
    CallFacts,
    Enrichment,
    EnrichmentStatus,
    FunctionFacts,
    ImportFacts,
    ParseQuality,
    ResolutionFacts,
    RustFacts,
    StageName,
    StageStatus,
)
from cq.model.finding import Finding, ScoreBreakdown
from cq.model.match import CapHit, Language, RawMatch, SearchStats
from cq.model.request import (
    Focus,
    LangScope,
    Limits,
    Pattern,
    PatternKind,
    QueryMode,
    SearchRequest,
)
from cq.model.result import (
    SCHEMA_VERSION,
    LanguageSummary,
    RewriteSummary,
    RunInfo,
    SearchResult,
    Section,
    Summary,
)

__all__ = [
    "SCHEMA_VERSION",
    "Agreement",
    "Binding",
    "CallFacts",
    "CapHit",
    "Category",
    "Classification",
    "Enrichment",
    "EnrichmentStatus",
    "Finding",
    "Focus",
    "FunctionFacts",
    "ImportFacts",
    "LangScope",
    "Language",
    "LanguageSummary",
    "Limits",
    "ParseQuality",
    "Pattern",
    "PatternKind",
    "QueryMode",
    "RawMatch",
    "ResolutionFacts",
    "RewriteSummary",
    "RunInfo",
    "RustFacts",
    "ScoreBreakdown",
    "SearchRequest",
    "SearchResult",
    "SearchStats",
    "Section",
    "StageName",
    "StageStatus",
    "Summary",
    "SymbolFlags",
    "Tier",
]
