"""What moved in a root since its index was last updated, knowing unchanged files by stat.

In: a root and its manifest (path -> digest and size of every indexed file). Out: the files
rg lists now with their digests (the next manifest), the ones whose digest differs from the
manifest (to re-index, with their bytes) and their size before any is read (``pending``).

A file's digest is cq's (``cq.parse.load_source``: a hash of the bytes rg searched), and
unchanged files are recognised by ``cq.cache.digests``: the same memory the search's Corpus
recalls and teaches, so a file read and hashed by either is not read or hashed by the other
while its stat (device, inode, size, mtime, ctime) stays put. The files are the search's
listing (``cq.parse.Listing``: one ``rg --files`` shared with the rewriter and the semantic
stage), without those over ``MAX_FILE_BYTES``. An unchanged tree costs that listing, a stat
per file and one lookup in cq's store; nothing is read.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import msgspec

from cq.cache.digests import DigestMemory, Recalled, file_size, stat_file
from cq.index.manifest import Entry, Manifest
from cq.model.language import language_of
from cq.parse import Listing, list_tree, list_tree_until, searched_digests
from cq.parse.source import load_source

MAX_FILE_BYTES = 2 * 1024 * 1024  # the search's default max_file_size_bytes
_RECALL_BATCH = 4096  # paths per lookup in cq's store: ~0.1 s each on 50,000 tiny files


class TreeState(msgspec.Struct, frozen=True, kw_only=True):
    """The tree now: ``known`` files whose digest the memory gave without a read, ``unknown``
    files to read (with their size on disk: what reading them will cost)."""

    known: Manifest
    unknown: dict[str, int]


class Late(Exception):
    """The deadline came while the tree was being listed: nothing was read yet."""


class Over(Exception):
    """The files listed so far hold more source than the limit: the rest were not listed."""

    def __init__(self, counted: int) -> None:
        super().__init__(f"more than {counted} bytes")
        self.counted = counted  # bytes of the files listed before it stopped (rg's order)


class Changes:
    """Reads what it must and remembers what it learned (``finish``)."""

    def __init__(
        self,
        root: Path,
        *,
        remember: bool,
        listing: Listing | None = None,
        deadline: float | None = None,
    ) -> None:
        """``listing``: the search's (None: list the tree here); ``deadline``
        (``time.monotonic``): when to stop listing (``Late``) or reading (``cut``)."""
        self.root = root
        self.listing = listing
        self.deadline = deadline
        self.base = os.path.abspath(root)
        self.memory: DigestMemory = searched_digests(remember)
        self.files_read = 0  # files read and hashed (the rest were known by their stat)
        self.cut = False  # the deadline came before every file was read

    def list(self, *, recall: bool = True, limit: int = 0) -> TreeState:
        """Every listed file up to ``MAX_FILE_BYTES``, known by its digest when its stat has
        not moved; without ``recall``, every file is unknown: a first build reads them all
        whatever their digests, and only needs their sizes (the lookups cost ~75 ms on the
        stdlib with its site-packages, 19,215 files, while the search's rewrite runs), and
        ``limit`` (bytes, 0: none) raises ``Over`` as soon as the files listed so far hold
        more than that, without listing the rest."""
        if not recall:
            return self._sizes(limit)
        paths = {f"{self.base}/{rel}": rel for rel in self._listed()}
        recalled: dict[str, Recalled] = {}
        every = list(paths)
        for start in range(0, len(every), _RECALL_BATCH):  # a deadline is seen between batches
            if self._past():
                raise Late
            recalled |= self.memory.recall(every[start : start + _RECALL_BATCH])
        known: Manifest = {}
        unknown: dict[str, int] = {}
        for n, (path, rel) in enumerate(paths.items()):
            if n % 512 == 0 and self._past():
                raise Late
            hit = recalled.get(path)
            if hit is not None:
                if hit.size <= MAX_FILE_BYTES:
                    known[rel] = Entry(hit.size, hit.digest)
            else:
                st = stat_file(path)
                if st is not None and st.size <= MAX_FILE_BYTES:
                    unknown[rel] = st.size
        return TreeState(known=known, unknown=unknown)

    def _sizes(self, limit: int) -> TreeState:
        """Every listed file's size, stat'ed as rg lists it; ``Over`` past ``limit``."""
        sizes: dict[str, int] = {}
        total = seen = 0

        def enough(rel: str) -> bool:
            nonlocal total, seen
            seen += 1
            if seen % 512 == 1 and self._past():
                raise Late
            size = file_size(f"{self.base}/{rel}")
            if size is not None and size <= MAX_FILE_BYTES:
                sizes[rel] = size
                total += size
            return 0 < limit < total

        try:
            if self.listing is not None:
                listed = self.listing.files_until(enough)
            else:
                listed = list_tree_until(self.root, enough)
        except OSError:
            listed = ()
        if listed is None:
            raise Over(total)
        return TreeState(known={}, unknown={rel: sizes[rel] for rel in listed if rel in sizes})

    def _listed(self) -> tuple[str, ...]:
        """The tree's files (none when rg cannot run: as before, the index then empties)."""
        try:
            return self.listing.files() if self.listing is not None else list_tree(self.root)
        except OSError:
            return ()

    def to_read(self, listing: TreeState, manifest: Manifest) -> dict[str, int]:
        """Files to read for this manifest (size on disk): unknown ones, and known ones whose
        digest is not the indexed one (a search read them since the index last did)."""
        moved = {
            rel: e.size for rel, e in listing.known.items() if not _indexed(manifest, rel, e.digest)
        }
        return listing.unknown | moved

    def _past(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def read(self, listing: TreeState, manifest: Manifest) -> tuple[dict[str, bytes], Manifest]:
        """(bytes of files whose digest is not the manifest's, the manifest of the tree now).
        Past the deadline the rest is left unread (``cut``): an indexed file keeps its
        entry, a new one waits for the next update."""
        fresh = dict(listing.known)
        changed: dict[str, bytes] = {}
        for n, (rel, size) in enumerate(sorted(self.to_read(listing, manifest).items())):
            if n % 64 == 0 and self._past():
                self.cut = True
            if self.cut:
                fresh.pop(rel, None)
                if rel in manifest:
                    fresh[rel] = manifest[rel]
                continue
            loaded = load_source(self.root, rel, language_of(rel) or "python")
            if loaded is None:
                fresh.pop(rel, None)
                continue
            self.files_read += 1
            digest = loaded.source.digest
            self.memory.learn(f"{self.base}/{rel}", loaded.stat, digest, loaded.stat_taken_ns)
            fresh[rel] = Entry(size, digest)
            if not _indexed(manifest, rel, digest):
                changed[rel] = loaded.source.data
        return changed, fresh

    def finish(self) -> None:
        """Write the digests learned (one transaction in cq's store)."""
        self.memory.flush()


def _indexed(manifest: Manifest, rel: str, digest: str) -> bool:
    entry = manifest.get(rel)
    return entry is not None and entry.digest == digest
