"""Shared data types: the narrow interface between pipeline stages.

Everything here is a frozen ``msgspec.Struct`` and imports nothing else of cq but
``cq.errors`` (a request refuses a query it cannot search), so every stage (candidates,
classify, enrich, rank, report, rewrite) can depend on it. Open ``request.py`` first: a
``SearchRequest`` goes in, a ``SearchResult`` (``result.py``) comes out.
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
from cq.model.match import CapHit, Language, LineWindow, RawMatch, SearchStats
from cq.model.ranking import RankWeights, Role, complete_weights
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
    FileCount,
    FindingList,
    FollowUp,
    FollowUps,
    HotFiles,
    KindCounts,
    LanguageSummary,
    Omitted,
    RewriteSummary,
    RunInfo,
    ScopeGroup,
    SearchResult,
    Section,
    Summary,
    TopContexts,
)
from cq.model.semantic import SemanticDefinition, SemanticFacts, SemanticStatus

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
    "FileCount",
    "Finding",
    "FindingList",
    "Focus",
    "FollowUp",
    "FollowUps",
    "FunctionFacts",
    "HotFiles",
    "ImportFacts",
    "KindCounts",
    "LangScope",
    "Language",
    "LanguageSummary",
    "Limits",
    "LineWindow",
    "Omitted",
    "ParseQuality",
    "Pattern",
    "PatternKind",
    "QueryMode",
    "RankWeights",
    "RawMatch",
    "ResolutionFacts",
    "RewriteSummary",
    "Role",
    "RunInfo",
    "RustFacts",
    "ScopeGroup",
    "ScoreBreakdown",
    "SearchRequest",
    "SearchResult",
    "SearchStats",
    "Section",
    "SemanticDefinition",
    "SemanticFacts",
    "SemanticStatus",
    "StageName",
    "StageStatus",
    "Summary",
    "SymbolFlags",
    "Tier",
    "TopContexts",
    "complete_weights",
]
