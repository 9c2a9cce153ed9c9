"""Finished enrichments in cq's persistent cache, so a warm search enriches without parsing.

An enrichment is a pure function of the file's bytes, the hit's position and the settings, so
it is stored under ``"<content hash>:<line>:<col>:<end_col>:<settings>"`` in the ``enrich``
payloads of ``cq.cache`` (the sqlite store classification uses; ``cq cache info`` shows it,
``cq cache clear`` empties it), whose namespace follows the code of the stages that build an
enrichment and all they import (``cq.cache.payloads``). All shown hits are looked up in one
query and written in one transaction. A cache failure is a miss, never an error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cq.cache.payloads import PayloadCache
from cq.model import Enrichment

if TYPE_CHECKING:
    from cq.enrich.shown import EnrichSettings

# The code that decides an enrichment's content: the per-hit loop (hit spans, limits) and, by
# its imports, every stage, the parses they use and the payload model.
BUILDERS = ("cq.enrich.shown",)


class EnrichmentStore:
    """Lookups and writes of one search, batched."""

    def __init__(self, settings: EnrichSettings) -> None:
        shaping = (
            settings.tuning.max_deep_bytes,
            settings.tuning.max_skeleton_bytes,
            settings.caps,
        )
        self.cache = PayloadCache(
            "enrich", Enrichment, BUILDERS, enabled=settings.use_store, settings=shaping
        )
        self.found: dict[str, Enrichment] = {}

    def prefetch(self, keys: list[str]) -> None:
        if keys:
            self.found.update(self.cache.get_many(keys))

    def get(self, key: str) -> Enrichment | None:
        return self.found.get(key)

    def put(self, key: str, enrichment: Enrichment) -> None:
        self.cache.add(key, enrichment)

    def flush(self) -> None:
        self.cache.flush()
