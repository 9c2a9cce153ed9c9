"""The persistent cache: one sqlite file under the user cache dir, never in the searched tree.

In: namespaced byte blobs keyed by strings (content hashes). Out: the same blobs, or nothing.
Safe with several cq processes at once (WAL, busy timeout); a corrupt database is set aside
and rebuilt; total size is bounded with least-recently-used eviction. Imports nothing else of
cq. Open ``store.py``.
"""

from cq.cache.store import Store, cache_dir, open_store

__all__ = ["Store", "cache_dir", "open_store"]
