"""Persistent store of finished enrichments, so a warm search enriches without parsing.

An enrichment is a pure function of the file's bytes, the hit's position and the settings,
so it is stored per file content hash: ``<cache>/enrich-v<N>/<digest>.msgpack`` maps
``"line:col:end_col:settings"`` to the ``Enrichment``. Files are written whole, atomically
(temp file + rename), once per search; unreadable or stale files count as misses. The cache
directory is ``$CQ_CACHE_DIR``, else ``$XDG_CACHE_HOME/cq``, else ``~/.cache/cq``; nothing is
ever written into the searched tree.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import msgspec

from cq.model import Enrichment

# Bump when enrichment output changes for the same input, so old entries are never served.
STORE_VERSION = 2

_decoder = msgspec.msgpack.Decoder(dict[str, Enrichment])
_encoder = msgspec.msgpack.Encoder()


def cache_root() -> Path:
    explicit = os.environ.get("CQ_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "cq" if xdg else Path.home() / ".cache" / "cq"


class EnrichmentStore:
    """Entries of the files touched in one search, loaded lazily, flushed once."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self.entries: dict[str, dict[str, Enrichment]] = {}
        self.changed: set[str] = set()

    @classmethod
    def open(cls, enabled: bool) -> EnrichmentStore:
        return cls(cache_root() / f"enrich-v{STORE_VERSION}" if enabled else None)

    def get(self, digest: str, key: str) -> Enrichment | None:
        return self._file(digest).get(key)

    def put(self, digest: str, key: str, enrichment: Enrichment) -> None:
        if self.directory is None:
            return
        self._file(digest)[key] = enrichment
        self.changed.add(digest)

    def flush(self) -> int:
        """Write the changed files; returns how many writes failed (the cache is optional)."""
        failures = 0
        if self.directory is None:
            return 0
        for digest in sorted(self.changed):
            tmp_name = None
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                with tempfile.NamedTemporaryFile(dir=self.directory, delete=False) as tmp:
                    tmp_name = tmp.name
                    tmp.write(_encoder.encode(self.entries[digest]))
                os.replace(tmp_name, self.directory / f"{digest}.msgpack")
            except OSError:
                failures += 1
                if tmp_name is not None:
                    Path(tmp_name).unlink(missing_ok=True)
        self.changed.clear()
        return failures

    def _file(self, digest: str) -> dict[str, Enrichment]:
        entries = self.entries.get(digest)
        if entries is None:
            entries = {}
            if self.directory is not None:
                try:
                    entries = _decoder.decode((self.directory / f"{digest}.msgpack").read_bytes())
                except (OSError, msgspec.DecodeError):
                    entries = {}
            self.entries[digest] = entries
        return entries
