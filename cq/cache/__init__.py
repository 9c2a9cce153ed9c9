"""The persistent cache: sqlite files under the user cache dir, never in the searched tree.

In: namespaced byte blobs keyed by strings (content hashes). Out: the same blobs, or nothing:
every value is checked against a checksum over its key and bytes, so a damaged or moved one
is a miss. Safe with several cq processes at once (WAL, busy timeout); a long-lived process
whose files were removed (``cq cache clear``) opens new ones at its next use. The files, WAL
included, stay at the database's half of ``CQ_CACHE_MAX_MB`` by least-recently-used eviction
that costs a put what it writes; large values are compressed. Every failure is a miss with
one warning: a corrupt database is set aside and rebuilt, an unusable cache dir turns the
cache off. Imports nothing else of cq. Open ``store.py``; then ``schema.py`` (files and
tables), ``bound.py`` (eviction), ``codec.py`` (checksums, compression), ``faults.py`` (what
failures mean), ``footprint.py`` (repository indexes, embedding vectors and Pyrefly scratch:
the other half), ``clearing.py`` (``cq cache clear``), ``sharing.py`` (who may remove the
files while others have them open), ``place.py`` (the dir and its layout).
Stages use ``payloads.PayloadCache`` (typed payloads under namespaces derived from the code
that builds them); ``digests.DigestMemory`` remembers a file's content digest under its
stat, so an unchanged file's payloads are found without reading it.
"""

from cq.cache.store import Store, cache_dir, open_store

__all__ = ["Store", "cache_dir", "open_store"]
