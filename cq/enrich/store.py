"""Finished enrichments in cq's persistent cache, so a warm search enriches without parsing.

An enrichment is a pure function of the file's bytes, the hit's position and the settings, so
it is stored under ``"<content hash>:<line>:<col>:<end_col>:<settings>"`` in the ``enrich``
payloads of ``cq.cache`` (the sqlite store classification uses; ``cq cache info`` shows it,
``cq cache clear`` empties it), whose namespace follows the code of the stages that build an
enrichment and all they import (``cq.cache.payloads``). All shown hits are looked up in one
query and written in one transaction. A cache failure is a miss, never an error.
"""

from __future__ import annotations

from cq.cache.payloads import PayloadCache
from cq.model import Enrichment
from cq.model.tuning import EnrichTuning, ParseTuning

# The code that decides an enrichment's content: the per-hit loop (hit spans, limits) and, by
# its imports, every stage, the parses they use and the payload model.
BUILDERS = ("cq.enrich.shown",)


class EnrichmentStore:
    """Lookups and writes of one search, batched."""

    def __init__(self, t: EnrichTuning, caps: ParseTuning, enabled: bool) -> None:
        shaping = (t.max_deep_bytes, t.max_skeleton_bytes, caps)  # caps that shape payloads
        self.cache = PayloadCache("enrich", Enrichment, BUILDERS, enabled=enabled, settings=shaping)
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
