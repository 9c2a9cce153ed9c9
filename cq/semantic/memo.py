"""Pyrefly's answers kept in cq's payload cache, so an identical search gives identical output
without asking again (and, when every shown hit is known, without starting Pyrefly at all).

What an answer depends on, and so what its key covers:

- the tree: a fingerprint of every Python file Pyrefly indexes (path, size, mtime, from
  ``rg --files`` with the search's excludes and ignore switches, stat'ed in the background
  while cq classifies): a definition, a type or a reference count can change with any file.
  Without excludes or switches the files are the search's listing (``cq.parse.Listing``,
  shared with the rewriter and the index);
- the hit: file, its content digest, line, column, category and text;
- the server: the Pyrefly binary (path, size, mtime: a new version answers differently),
  whether it builds the workspace index (reference counts), and the search's excludes
  (which files the fingerprint covers);
- cq's code that turns answers into facts (``PayloadCache`` namespaces it).

Only complete answers are kept (status ``applied``: hover, definition, references after
indexing, and diagnostics after indexing all came; or ``degraded`` for a reason that is not
the clock: a request Pyrefly answered with an error). A search shows what the cache holds
when it looks, and no other answer (``stage.py``), so the same cache gives the same report;
a hit not in it is ``pending`` until a long-lived cq's background batch, or a search told
to wait, stores its answer. Files imported from outside the root (site-packages, an excluded
directory) are not fingerprinted: an installed package changing under an unchanged tree is
the one change a cached answer does not see.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import threading
from pathlib import Path

import msgspec

from cq.cache.digests import stat_fingerprint
from cq.cache.payloads import PayloadCache
from cq.model import Finding, SearchRequest, SemanticFacts
from cq.parse import Listing, list_tree

_BUILDERS = ("cq.semantic.stage",)


class AnswerMemo:
    """The cache of one search: keys wait for the tree's fingerprint (``start``)."""

    def __init__(
        self,
        request: SearchRequest,
        binary: str | None,
        *,
        enabled: bool,
        indexing: bool,
        listing: Listing | None = None,
    ) -> None:
        self.request = request
        self.listing = listing  # the search's list of the tree's files
        self.binary = binary
        self.enabled = enabled and request.use_cache
        self.indexing = indexing
        self.fingerprint: str | None = None
        self.every_hit_known = False  # the whole search was answered before (``search_key``)
        self._ready = threading.Event()
        self._cache: PayloadCache[SemanticFacts] | None = None
        if self.enabled and binary is not None:
            self._store()  # opened here, not first on the background thread

    def compute(self) -> None:
        """The tree's fingerprint (None when rg fails: nothing is cached then), and whether
        the cache knows every hit of this very search."""
        try:
            if self.enabled and self.binary is not None:
                tree = _fingerprint(self.request, self.binary, self.listing)
                self.fingerprint = _digest(tree, "indexed" if self.indexing else "not indexed")
                search = self.search_key()
                self.every_hit_known = search is not None and bool(self.get_many([search]))
        except (OSError, subprocess.SubprocessError):
            self.fingerprint = None
        finally:
            self._ready.set()

    def wait(self) -> bool:
        """Whether there are keys, once the fingerprint is done: cq's own work (a stat per
        Python file), waited for in full, so what a search finds in the cache never depends
        on how fast the machine stat'ed the tree."""
        self._ready.wait()
        return self.fingerprint is not None

    def search_key(self) -> str | None:
        """A key for "every shown hit of this very request was answered": when it is stored,
        the search needs no server."""
        if self.fingerprint is None:
            return None
        return _digest(self.fingerprint, msgspec.json.encode(self.request).decode())

    def key(self, finding: Finding, digest: str) -> str | None:
        if self.fingerprint is None:
            return None
        f = finding
        return _digest(self.fingerprint, f.file, digest, f.line, f.col, f.category, f.text)

    def get_many(self, keys: list[str]) -> dict[str, SemanticFacts]:
        return self._store().get_many(keys) if keys else {}

    def put(self, answers: dict[str, SemanticFacts], every_hit_known: bool) -> None:
        store = self._store()
        for key, facts in answers.items():
            store.add(key, facts)
        search = self.search_key()
        if every_hit_known and search is not None:
            store.add(search, SemanticFacts(status="applied"))
        store.flush()

    def _store(self) -> PayloadCache[SemanticFacts]:
        if self._cache is None:
            self._cache = PayloadCache("semantic", SemanticFacts, _BUILDERS, enabled=self.enabled)
        return self._cache


def _fingerprint(request: SearchRequest, binary: str, listing: Listing | None) -> str:
    digest = hashlib.blake2b(digest_size=16)
    server = os.stat(binary)
    digest.update(f"{os.path.realpath(binary)}\0{server.st_size}\0{server.st_mtime_ns}\n".encode())
    digest.update(msgspec.json.encode(sorted(request.exclude)) + b"\n")
    listed = [p for p in _listed(request, listing) if p.endswith((".py", ".pyi"))]
    stat_fingerprint(digest, request.root, listed)
    return digest.hexdigest()


def _listed(request: SearchRequest, listing: Listing | None) -> tuple[str, ...]:
    """The tree's Python and Rust files as Pyrefly sees the tree: the search's listing, or
    rg's with the search's switches and excludes when it has any."""
    options = ["--hidden"] if request.hidden else []
    options += ["--no-ignore"] if request.no_ignore else []
    options += [arg for glob in request.exclude for arg in ("--glob", "!" + glob)]
    if listing is not None and not options:
        return listing.files()
    return list_tree(Path(request.root), tuple(options))


def _digest(*parts: object) -> str:
    return hashlib.blake2b("\0".join(map(str, parts)).encode(), digest_size=16).hexdigest()
