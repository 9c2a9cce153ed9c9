"""Finished enrichments in cq's persistent cache, so a warm search enriches without parsing.

An enrichment is a pure function of the file's bytes, the hit's position and the settings, so
it is stored under ``"<content hash>:<line>:<col>:<end_col>:<settings>"`` in the
``enrich-<code hash>`` namespace of ``cq.cache`` (the sqlite store classification uses; ``cq cache
info`` shows it, ``cq cache clear`` empties it). All shown hits are looked up in one query and
written in one transaction. A cache failure is a miss, never an error.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from cq.model import Enrichment

if TYPE_CHECKING:
    from cq.cache import Store


@cache
def namespace() -> str:
    """``enrich-<hash>`` of the enrichment code, the payload model and the parser versions.

    A changed stage never serves payloads built by the old one, with no version to bump by
    hand; entries of old namespaces age out of the store's LRU.
    """
    from cq.dists import dist_version

    digest = hashlib.blake2b(digest_size=6)
    package = Path(__file__).parent.parent
    for path in sorted((package / "enrich").glob("*.py")):
        digest.update(path.read_bytes())
    digest.update((package / "model" / "enrichment.py").read_bytes())
    digest.update((package / "parse" / "rust_macros.py").read_bytes())  # Rust macro bodies
    for dist in ("ast-grep-py", "libcst", "tree-sitter", "tree-sitter-python", "tree-sitter-rust"):
        digest.update(f"{dist}={dist_version(dist)};".encode())
    return f"enrich-{digest.hexdigest()}"


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
        for key, blob in self.store.get_many(namespace(), keys).items():
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
            self.store.put_many(namespace(), self.pending)
        self.pending = {}
