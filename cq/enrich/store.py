"""Finished enrichments in cq's persistent cache, so a warm search enriches without parsing.

An enrichment is a pure function of the file's bytes, the hit's position and the settings, so
it is stored under ``"<content hash>:<line>:<col>:<end_col>:<settings>"`` in the
``enrich-v<N>`` namespace of ``cq.cache`` (the sqlite store classification uses; ``cq cache
info`` shows it, ``cq cache clear`` empties it). All shown hits are looked up in one query and
written in one transaction. A cache failure is a miss, never an error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from cq.model import Enrichment

if TYPE_CHECKING:
    from cq.cache import Store

# Bump when enrichment output changes for the same input, so old entries are never served.
STORE_VERSION = 2
NAMESPACE = f"enrich-v{STORE_VERSION}"

_decoder = msgspec.msgpack.Decoder(Enrichment)
_encoder = msgspec.msgpack.Encoder()


class EnrichmentStore:
    """Lookups and writes of one search, batched."""

    def __init__(self, store: Store | None) -> None:
        self.store = store
        self.found: dict[str, Enrichment] = {}
        self.pending: dict[str, bytes] = {}

    @classmethod
    def open(cls, enabled: bool) -> EnrichmentStore:
        if not enabled:
            return cls(None)
        from cq.cache import open_store

        return cls(open_store())

    def prefetch(self, keys: list[str]) -> None:
        if self.store is None or not keys:
            return
        for key, blob in self.store.get_many(NAMESPACE, keys).items():
            try:
                self.found[key] = _decoder.decode(blob)
            except msgspec.DecodeError:
                continue

    def get(self, key: str) -> Enrichment | None:
        return self.found.get(key)

    def put(self, key: str, enrichment: Enrichment) -> None:
        if self.store is not None:
            self.pending[key] = _encoder.encode(enrichment)

    def flush(self) -> None:
        if self.store is not None and self.pending:
            self.store.put_many(NAMESPACE, self.pending)
        self.pending = {}
