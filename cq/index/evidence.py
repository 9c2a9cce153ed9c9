"""Consult the index for one search: bring it up to date, ask it, keep the hits in scope.

The update runs in a thread of its own from the moment the search knows it is a rewritten
question (``IndexUpdateRun.start``), while rg, classification and enrichment run; the search
waits for it only when it fuses (``IndexUpdateRun.consult``). Listing and stat-ing the tree,
reading what changed and tantivy's commit wait on the disk or run outside the GIL, and a
first build's rows come from worker processes, so the two overlap instead of adding up.

Any failure of the index (a disk error, an index tantivy cannot read even after a rebuild)
leaves the search with rg's evidence alone: the index is an aid, never a reason to fail. An
index that opens but fails when read (a damaged segment) is removed and built again once.
"""

from __future__ import annotations

import fnmatch
import posixpath
import threading
import time
from pathlib import Path

import msgspec

from cq.errors import SearchCancelledError
from cq.index.build import IndexUpdate, OpenIndex, Progress, TooLarge, update_index
from cq.index.location import clear_index
from cq.index.manifest import Manifest
from cq.index.query import IndexHits, ask, asked_words
from cq.model import SearchRequest
from cq.model.index_tuning import IndexTuning
from cq.parse import Listing


class Skipped(msgspec.Struct, frozen=True, kw_only=True):
    source_bytes: int


class Evidence(msgspec.Struct, frozen=True, kw_only=True):
    hits: IndexHits
    words: dict[str, float]  # the query's words as the index was asked
    update: IndexUpdate
    manifest: Manifest  # the indexed files' sizes, for the fusion's file prior
    milliseconds: float  # the update (in its thread) and the query, end to end
    waited_ms: float  # how long the search waited for the update to finish


class IndexUpdateRun:
    """One search's index update, running in a thread from ``start`` until ``consult``."""

    def __init__(
        self,
        request: SearchRequest,
        progress: Progress,
        tuning: IndexTuning,
        listing: Listing | None = None,
    ) -> None:
        self.request = request
        self.listing = listing  # the search's list of the tree's files
        self.progress = progress
        self.tuning = tuning
        self.abandoned = threading.Event()
        self.retried = False  # the index was removed and built again once
        self.outcome: tuple[OpenIndex, IndexUpdate] | Skipped | BaseException | None = None
        # A daemon: a search that fails elsewhere or exits early does not wait for it (tantivy
        # commits atomically, so an update cut short leaves the index as last committed).
        self.thread = threading.Thread(target=self._run, name="cq-index-update", daemon=True)

    @classmethod
    def start(
        cls,
        request: SearchRequest,
        progress: Progress,
        tuning: IndexTuning,
        listing: Listing | None = None,
    ) -> IndexUpdateRun:
        run = cls(request, progress, tuning, listing)
        run.thread.start()
        return run

    def _run(self) -> None:
        try:
            self.outcome = self._update()
        except TooLarge as exc:
            self.outcome = Skipped(source_bytes=exc.source_bytes)
        except (OSError, ValueError, RuntimeError):
            self.outcome = None if self._cleared() else self._retried()
        except BaseException as exc:  # a cancelled search: re-raised in the search's thread
            self.outcome = exc

    def _update(self) -> tuple[OpenIndex, IndexUpdate]:
        """A search builds the index on its own up to ``index.auto_build_bytes`` of new
        source; a bigger tree is indexed only by an explicit ``cq index``, then kept current
        by every search."""
        return update_index(
            Path(self.request.root),
            self._progress,
            persist=self.request.use_cache,
            build_limit=self.tuning.auto_build_bytes,
            tuning=self.tuning,
            listing=self.listing,
        )

    def _cleared(self) -> bool:
        """False (and the index removed) the first time an index of the cache fails: left
        alone a damaged segment would fail every later search too. True: give up."""
        if self.retried or not self.request.use_cache:
            return True
        self.retried = True
        clear_index(Path(self.request.root))
        return False

    def _retried(self) -> tuple[OpenIndex, IndexUpdate] | Skipped | None:
        try:
            return self._update()
        except TooLarge as exc:
            return Skipped(source_bytes=exc.source_bytes)
        except (OSError, ValueError, RuntimeError):
            return None

    def _progress(self, status: str) -> None:
        if self.abandoned.is_set():  # stop before the commit: nothing is half-written
            raise SearchCancelledError("index update abandoned")
        self.progress(status)

    def abandon(self) -> None:
        """The search ends without consulting: stop at the update's next checkpoint."""
        self.abandoned.set()

    def consult(self, terms: tuple[str, ...]) -> Evidence | Skipped | None:
        """The index's files and units for the request's text and the rewriter's ``terms``
        (``Skipped``: too much new source for a search to index; None: the index failed)."""
        waiting = time.perf_counter()
        self.thread.join()
        waited = time.perf_counter() - waiting
        outcome = self.outcome
        if isinstance(outcome, BaseException):
            raise outcome
        if outcome is None or isinstance(outcome, Skipped):
            return outcome
        opened, update = outcome
        request = self.request
        asked = time.perf_counter()
        words = asked_words(request.query, terms, self.tuning)
        try:
            hits = ask(opened.index, opened.manifest, request.query, terms, self.tuning, words)
        except (OSError, ValueError, RuntimeError):
            if self._cleared():
                return None
            again = self._retried()  # built again here: the search needs it now
            if again is None or isinstance(again, Skipped):
                return again
            opened, update = again
            try:
                hits = ask(opened.index, opened.manifest, request.query, terms, self.tuning, words)
            except (OSError, ValueError, RuntimeError):
                return None
        keep = _in_scope(request)
        hits = msgspec.structs.replace(
            hits,
            files=tuple(h for h in hits.files if keep(h.path)),
            units=tuple(h for h in hits.units if keep(h.path)),
            named=tuple(m for m in hits.named if keep(m.path)),
            defined=tuple(m for m in hits.defined if keep(m.path)),
        )
        return Evidence(
            hits=hits,
            words=words,
            update=update,
            manifest=opened.manifest,
            milliseconds=round(update.milliseconds + (time.perf_counter() - asked) * 1000, 1),
            waited_ms=round(waited * 1000, 1),
        )


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
