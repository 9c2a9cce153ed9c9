"""cq: code search that understands code.

``search(SearchRequest) -> SearchResult`` runs ripgrep, classifies every hit, enriches the
ones worth showing, ranks them and returns a typed result; ``cq.report`` renders it.
Errors a user can act on are ``CqError`` subclasses.
"""

from __future__ import annotations

from cq.errors import CqError, PatternError, RgNotFoundError, SearchFailedError, UsageError

TYPE_CHECKING = False  # typing's, without importing typing on every command's path
if TYPE_CHECKING:
    from cq.model import SearchRequest, SearchResult

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """``SearchRequest`` and ``SearchResult`` on first use: every ``cq`` command imports this
    package, and the server's thin client must not pay for msgspec and the model (~30 ms)."""
    if name in ("SearchRequest", "SearchResult"):
        from cq import model

        return getattr(model, name)
    raise AttributeError(f"module 'cq' has no attribute {name!r}")


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
