"""The enrichment's standby: a child a one-shot search forks as soon as its request is
settled (``cq.forked.Standby``). While this process imports the pipeline, runs rg and
classifies, the child imports LibCST and the enrichment's stages on the core that start
leaves idle; the shown hits to compute from their files are then handed to it whole
(``cq.enrich.share``), and it takes turns at their files with a helper it forks itself,
which inherits what it imported.

Why: LibCST's import costs ~0.14 CPU-s (``python -X importtime -c 'import libcst'``), and a
cold search with a hit for LibCST's scopes paid it on its path, in each of the two processes
computing the hits. Forked after the request is settled, the child has LibCST imported
10-25 ms after the search reaches its enrichment on a first 'TextIOWrapper' search of the
stdlib, and the search's classification is no slower beside it (bench/results/).

Forked only where it can pay off: a process that may fork (``cq.forked.possible``) and has
not imported LibCST (cq's server and ``cq mcp`` import it as they warm up), for a search not
made before with this cache. A repeat finds its hits in the enrichment store and would
leave the child's CPU spent for nothing, so the searches made are remembered in the cache
by root and query (``remember``). Handed nothing (no hit for LibCST's scopes, every hit
stored), the child is dismissed.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from cq import forked

if TYPE_CHECKING:
    from cq.settings import Settings

# The cache's namespace of the searches made (their root and query), whose repeats need no
# standby: a key per search, an empty value.
_NAMESPACE = "standby-searches"

_standing: forked.Standby | None = None
_stood = False  # a standby was forked for this process's search (``finish`` remembers it)


def stand_by(settings: Settings) -> None:
    """Fork the standby for a search settled with ``settings`` when it can pay off (above):
    the profile's ``enrich.standby`` on, Python in its languages."""
    global _standing, _stood
    if not settings.tuning.enrich.standby or settings.scope.lang == "rust":
        return
    if _stood or "libcst" in sys.modules or not forked.possible():
        return
    if settings.scope.use_cache and _made_before(settings):
        return
    _standing = forked.Standby.start(_ready, _serve)
    _stood = _standing is not None


def take(wanted: bool) -> forked.Standby | None:
    """The standby for this search's enrichment if ``wanted`` (a hit may need LibCST's
    scopes), once; otherwise it is dismissed."""
    global _standing
    standby, _standing = _standing, None
    if standby is not None and not wanted:
        standby.dismiss()
        return None
    return standby


def finish(settings: Settings, *, searched: bool) -> None:
    """After the search: a standby nobody took is dismissed, and a search that ``searched``
    (ran to its end) is remembered, so its repeat forks none."""
    take(False)
    if searched and _stood and settings.scope.use_cache:
        from cq.cache.store import open_store

        open_store().put_many(_NAMESPACE, {_key(settings): b""})


def _made_before(settings: Settings) -> bool:
    from cq.cache.store import open_store

    store = open_store()
    return store.available and bool(store.get_many(_NAMESPACE, [_key(settings)]))


def _key(settings: Settings) -> str:
    return f"{settings.scope.root}\0{settings.echo.query}"


def _ready() -> None:
    """In the child: what computing a hit imports, LibCST's parser and scopes first run."""
    import cq.enrich.share  # noqa: F401  (the stages, the parsers' modules)
    from cq.parse import cst_metadata

    cst_metadata("x = 1\n")


def _serve(request: bytes) -> bytes:  # pragma: no cover - runs in the child
    from cq.enrich.share import serve_request

    return serve_request(request)
