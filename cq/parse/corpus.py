"""The files of one search: each read and hashed once, the same bytes for every stage.

Every stage (classification, ranking, enrichment) asks the search's ``Corpus`` for a file
instead of reading it, so the bytes that were hashed are the bytes that are parsed and the
bytes whose results are cached under that hash: a file that changes during a search cannot
get results computed from one version stored under the hash of another.

Memory: an audit search matches thousands of files (175 MB of source for ``get`` over a
24,000-file tree), more than a search should hold at once. A stage that is done with a file
``release``\\ s it; the corpus keeps released bytes while they fit ``keep_bytes`` and drops the
least recently used beyond it, keeping their hash. A later stage asking for a dropped file
gets it read again and checked against that hash (``CorpusStats.reread``); a file whose
bytes changed in the meantime is reported as changed (``None``), never parsed under the old
hash. Searches whose matched files fit the budget read every file exactly once.

Unchanged files are not read at all when a payload is all a stage needs: ``recall`` gives the
digests ``cq.cache.digests`` remembers for files whose stat has not moved since a search
read them, and stages look their cached payloads up by those. A file whose payload is
missing is read then, and the bytes read are the ones hashed, parsed and cached; if they do
not hash to the recalled digest the file changed during the search (``changed``, ``None``).
Every first read teaches the memory its file's digest (``finish`` writes them).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path

import msgspec

from cq.cache.digests import DigestMemory, Recalled
from cq.model import Language
from cq.model.tuning import ScaleTuning
from cq.parse.listing import Listing
from cq.parse.source import SourceFile, load_source

KEEP_BYTES = ScaleTuning().corpus_keep_bytes  # the tuned default (see its provenance)
_HASHED_BY = ("cq.parse.source",)  # the code behind a digest: the memory's entries follow it


def searched_digests(remember: bool = True) -> DigestMemory:
    """The digest memory of searched bytes (``load_source``'s digest): the Corpus's, and the
    repository index's, so a file either one hashed is known to the other by its stat."""
    return DigestMemory("searched", _HASHED_BY, enabled=remember)


class CorpusStats(msgspec.Struct, frozen=True, kw_only=True):
    """What the corpus read: ``files_read`` distinct files, ``reread`` of them read again
    after their bytes were dropped (same hash), ``changed`` found different on that read."""

    files_read: int = 0
    bytes_read: int = 0
    reread: int = 0
    changed: int = 0
    recalled: int = 0  # digests taken from the memory (files not read for them)
    racy: int = 0  # files read too soon after their last change to be remembered


class Corpus:
    """One search's view of the files under ``root`` (paths relative to it)."""

    def __init__(self, root: Path, keep_bytes: int = KEEP_BYTES, *, remember: bool = True) -> None:
        """``remember``: use and teach the digest memory (off with ``--no-cache``)."""
        self.root = root
        self.keep_bytes = keep_bytes
        self._live: dict[str, SourceFile | None] = {}  # files in use or kept
        self._released: OrderedDict[str, int] = OrderedDict()  # kept after release, LRU
        self._kept_bytes = 0
        self._digests: dict[str, str | None] = {}  # the hash each file has for this search
        self._read: set[str] = set()  # files read at least once
        self._recalled: set[str] = set()  # files whose digest came from the memory
        self._files_read = self._bytes_read = self._reread = self._changed = 0
        self._lock = threading.Lock()
        self._base = os.path.abspath(root)
        self._memory = searched_digests(remember)
        self.listing = Listing(root)  # the tree's Python and Rust files, listed once

    def recall(self, rels: Iterable[str]) -> dict[str, Recalled]:
        """Of ``rels`` not met yet, those whose digest (and size on disk) the memory gives
        without a read; that digest is theirs for the search (``digest``)."""
        with self._lock:
            fresh = {os.path.join(self._base, rel): rel for rel in rels if rel not in self._digests}
            found = self._memory.recall(fresh)
            for path, known in found.items():
                self._digests[fresh[path]] = known.digest
                self._recalled.add(fresh[path])
            return {fresh[path]: known for path, known in found.items()}

    def source(self, rel: str, language: Language) -> SourceFile | None:
        """The file's content as first read (None: unreadable, or changed since)."""
        with self._lock:  # the semantic stage opens files from a thread of its own
            return self._source(rel, language)

    def _source(self, rel: str, language: Language) -> SourceFile | None:
        if rel in self._live:
            if rel in self._released:
                self._released.move_to_end(rel)
            return self._live[rel]
        loaded = load_source(self.root, rel, language)
        source = loaded.source if loaded is not None else None
        if rel not in self._read:
            self._read.add(rel)
            if loaded is not None:
                self._files_read += 1
                self._bytes_read += len(loaded.source.data)
                known = rel in self._recalled and loaded.source.digest == self._digests[rel]
                if not known:  # a recalled file read for its bytes is remembered already
                    path = os.path.join(self._base, rel)
                    self._memory.learn(
                        path, loaded.stat, loaded.source.digest, loaded.stat_taken_ns
                    )
        else:
            self._reread += 1
        if rel not in self._digests:  # first met: what was read is the file for this search
            self._digests[rel] = source.digest if source is not None else None
        elif source is not None and source.digest != self._digests[rel]:
            self._changed += 1
            source = None
        self._live[rel] = source
        return source

    def digest(self, rel: str) -> str | None:
        """The hash of the file as first read (None: not read, or unreadable)."""
        return self._digests.get(rel)

    def release(self, rel: str) -> None:
        """The caller is done with ``rel`` for now: keep its bytes only while they fit."""
        with self._lock:
            self._release(rel)

    def _release(self, rel: str) -> None:
        source = self._live.get(rel)
        if source is None or rel in self._released:
            return
        self._released[rel] = len(source.data)
        self._kept_bytes += len(source.data)
        while self._kept_bytes > self.keep_bytes and self._released:
            victim, size = self._released.popitem(last=False)
            del self._live[victim]
            self._kept_bytes -= size

    def finish(self) -> None:
        """Write what the search taught the digest memory (one transaction)."""
        with self._lock:
            self._memory.flush()

    def stats(self) -> CorpusStats:
        memory = self._memory.stats()
        return CorpusStats(
            files_read=self._files_read,
            bytes_read=self._bytes_read,
            reread=self._reread,
            changed=self._changed,
            recalled=memory.recalled,
            racy=memory.racy,
        )
