"""Consult the index for one search: bring it up to date, ask it, keep the hits in scope.

Any failure of the index (a disk error, an index tantivy cannot read even after a rebuild)
leaves the search with rg's evidence alone: the index is an aid, never a reason to fail. An
index that opens but fails when read (a damaged segment) is removed and built again once.
"""

from __future__ import annotations

import fnmatch
import posixpath
import time
from pathlib import Path

import msgspec

from cq.env import env_int
from cq.index.build import IndexUpdate, Progress, TooLarge, update_index
from cq.index.location import clear_index
from cq.index.query import IndexHits, ask, query_words
from cq.model import SearchRequest

# A search builds the index on its own up to this much new source (the 19 MB bench tree takes
# ~3 s on 2 cores, bench/index_speed.py); a bigger tree (the stdlib with its site-packages is
# 176 MB) is indexed only by an explicit ``cq index``, then kept current by every search.
AUTO_BUILD_BYTES = 64 * 1024 * 1024  # CQ_INDEX_AUTO_BYTES overrides it


class Skipped(msgspec.Struct, frozen=True, kw_only=True):
    source_bytes: int


class Evidence(msgspec.Struct, frozen=True, kw_only=True):
    hits: IndexHits
    words: dict[str, float]  # the query's words as the index was asked
    update: IndexUpdate
    milliseconds: float


def consult(
    request: SearchRequest, terms: tuple[str, ...], progress: Progress
) -> Evidence | Skipped | None:
    """The index's files and units for the request's text and the rewriter's ``terms``
    (``Skipped``: too much new source for a search to index; None: the index failed)."""
    started = time.perf_counter()
    for attempt in range(2):
        try:
            opened, update = update_index(
                Path(request.root),
                progress,
                persist=request.use_cache,
                build_limit=env_int("CQ_INDEX_AUTO_BYTES", AUTO_BUILD_BYTES),
            )
            words = query_words(request.query, terms)
            hits = ask(opened.index, opened.manifest, request.query, terms)
            break
        except TooLarge as exc:
            return Skipped(source_bytes=exc.source_bytes)
        except (OSError, ValueError, RuntimeError):
            if attempt or not request.use_cache:
                return None
            # It opened but cannot be read (a damaged segment): left alone it would fail
            # every later search too, so it is removed and built again, once.
            clear_index(Path(request.root))
    keep = _in_scope(request)
    hits = IndexHits(
        files=tuple(h for h in hits.files if keep(h.path)),
        units=tuple(h for h in hits.units if keep(h.path)),
        named=tuple(m for m in hits.named if keep(m.path)),
        defined=tuple(m for m in hits.defined if keep(m.path)),
    )
    ms = round((time.perf_counter() - started) * 1000, 1)
    return Evidence(hits=hits, words=words, update=update, milliseconds=ms)


def _in_scope(request: SearchRequest):  # type: ignore[no-untyped-def]
    """The request's language, ``--in``, ``--include`` and ``--exclude`` as a path test."""
    suffixes = {"python": (".py", ".pyi"), "rust": (".rs",)}.get(
        request.lang, (".py", ".pyi", ".rs")
    )
    prefix = posixpath.normpath(request.in_dir).strip("/") + "/" if request.in_dir else ""

    def keep(path: str) -> bool:
        if not path.endswith(suffixes) or not path.startswith(prefix):
            return False
        name = posixpath.basename(path)
        if request.include and not any(_match(path, name, g) for g in request.include):
            return False
        return not any(_match(path, name, g) for g in request.exclude)

    return keep


def _match(path: str, name: str, glob: str) -> bool:
    negated = glob.startswith("!")
    pattern = glob[1:] if negated else glob
    if pattern.startswith("/"):  # anchored at the root, as rg reads it (cq.confine)
        hit = fnmatch.fnmatch(path, pattern.lstrip("/"))
    else:
        hit = fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(name, pattern)
    return hit != negated
