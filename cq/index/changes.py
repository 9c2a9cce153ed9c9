"""What moved in a root since its index was last updated, knowing unchanged files by stat.

In: a root and its manifest (path -> digest and size of every indexed file). Out: the files
rg lists now with their digests (the next manifest), the ones whose digest differs from the
manifest (to re-index, with their bytes) and their size before any is read (``pending``).

A file's digest is cq's (``cq.parse.load_source``: blake2b of the bytes rg searched), and
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

from cq.cache.digests import DigestMemory, Recalled, stat_file
from cq.index.files import language_of_path
from cq.index.manifest import Entry, Manifest
from cq.parse import Listing, list_tree, searched_digests
from cq.parse.source import load_source

MAX_FILE_BYTES = 2 * 1024 * 1024  # the search's default max_file_size_bytes


class TreeState(msgspec.Struct, frozen=True, kw_only=True):
    """The tree now: ``known`` files whose digest the memory gave without a read, ``unknown``
    files to read (with their size on disk: what reading them will cost)."""

    known: Manifest
    unknown: dict[str, int]


class Changes:
    """Reads what it must and remembers what it learned (``finish``)."""

    def __init__(self, root: Path, *, remember: bool, listing: Listing | None = None) -> None:
        """``listing``: the search's (None: list the tree here)."""
        self.root = root
        self.listing = listing
        self.base = os.path.abspath(root)
        self.memory: DigestMemory = searched_digests(remember)
        self.files_read = 0  # files read and hashed (the rest were known by their stat)
        self.cut = False  # the deadline came before every file was read

    def list(self) -> TreeState:
        """Every listed file up to ``MAX_FILE_BYTES``, known by its digest when its stat has
        not moved."""
        paths = {f"{self.base}/{rel}": rel for rel in self._listed()}
        recalled: dict[str, Recalled] = self.memory.recall(paths)
        known: Manifest = {}
        unknown: dict[str, int] = {}
        for path, rel in paths.items():
            hit = recalled.get(path)
            if hit is not None:
                if hit.size <= MAX_FILE_BYTES:
                    known[rel] = Entry(hit.size, hit.digest)
            else:
                st = stat_file(path)
                if st is not None and st.size <= MAX_FILE_BYTES:
                    unknown[rel] = st.size
        return TreeState(known=known, unknown=unknown)

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

    def read(
        self, listing: TreeState, manifest: Manifest, deadline: float | None = None
    ) -> tuple[dict[str, bytes], Manifest]:
        """(bytes of files whose digest is not the manifest's, the manifest of the tree now).
        Past ``deadline`` (``time.monotonic``) the rest is left unread (``cut``): an indexed
        file keeps its entry, a new one waits for the next update."""
        fresh = dict(listing.known)
        changed: dict[str, bytes] = {}
        for n, (rel, size) in enumerate(sorted(self.to_read(listing, manifest).items())):
            if deadline is not None and n % 64 == 0 and time.monotonic() >= deadline:
                self.cut = True
            if self.cut:
                fresh.pop(rel, None)
                if rel in manifest:
                    fresh[rel] = manifest[rel]
                continue
            loaded = load_source(self.root, rel, language_of_path(rel))
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
