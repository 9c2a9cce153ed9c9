"""cq: code search that understands code.

``search(SearchRequest) -> SearchResult`` runs ripgrep, classifies every hit, enriches the
ones worth showing, ranks them and returns a typed result; ``cq.report`` renders it.
Errors a user can act on are ``CqError`` subclasses.
"""

from __future__ import annotations

from cq.errors import CqError, PatternError, RgNotFoundError, SearchFailedError, UsageError
from cq.model import SearchRequest, SearchResult

__version__ = "0.1.0"


def search(request: SearchRequest) -> SearchResult:
    """Run one search (see ``cq.pipeline``)."""
    from cq.pipeline import run_search

    return run_search(request)


__all__ = [
    "CqError",
    "PatternError",
    "RgNotFoundError",
    "SearchFailedError",
    "SearchRequest",
    "SearchResult",
    "UsageError",
    "__version__",
    "search",
]
