"""Consult the index for one search: bring it up to date, ask it, keep the hits in scope.

The update runs in a thread of its own from the moment the search knows it is a rewritten
question (``IndexUpdateRun.start``), while rg, classification and enrichment run; the search
waits for it only when it fuses (``IndexUpdateRun.consult``). Listing and stat-ing the tree,
reading what changed and tantivy's commit wait on the disk or run outside the GIL, and a
first build's rows come from worker processes, so the two overlap instead of adding up. It
lists the tree only once the rewrite's rg scan of the tree's names is over (``after``): two
such scans side by side each take about twice as long, and the rewrite waits for its own.

The index is an aid, never a reason to fail, and never a reason for a different report. A
damaged index is rebuilt before it is read (``opening.py``); a failure of tantivy while it
is updated or asked (an error, or a Rust panic) discards it and builds it again, and when
that fails too (a full disk, a dir that cannot hold it) the search indexes in memory as
``--no-cache`` does; only when even that fails does it answer with rg's evidence alone. The
search waits for the update until its ``--timeout`` runs out; the build stops earlier (its
share, ``index.build_timeout_share``) to commit the files done, and an index not ready is
not asked: the answer is ``--no-index``'s, and the rest of the build goes on behind the
search as a first build too large to wait for does (below). Each of these says so in one
warning line and in the report (``summary.telemetry.index.unused``).

A question waits for what it needs: its index, up to ``index.question_wait_s`` from the
search's start when that is longer than ``--timeout`` (rg's watchdog). A first build of a
tree the size of moto (22 MB) takes longer than the default ten seconds beside the search's
own stages on two busy cores, and a question answered without its index is a worse answer
(the Relevant Functions are the index's), so the first answer would differ from every
later one.

A first build of more than ``index.background_build_bytes`` of new source (a root cq has
not indexed yet, a large tree) is never waited for, nor run beside the search: the search
answers without the index (``Building``) and, when it ends, starts the build in a process of
its own (``behind.py``), which outlives it; later questions use the index once what is left
to build is below that size. Which answer a search gives depends on the index on disk when
it starts, never on how fast this search runs.
"""

from __future__ import annotations

import fnmatch
import math
import posixpath
import threading
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

from cq.confine import in_part
from cq.errors import SearchCancelledError
from cq.index.build import Deferred, IndexUpdate, OpenIndex, Progress, TooLarge, update_index
from cq.index.changes import Late
from cq.index.integrity import describe, engine_failed
from cq.index.location import index_dir
from cq.index.manifest import Manifest
from cq.index.opening import Busy, discard
from cq.index.query import IndexHits, ask, asked_words
from cq.model import Question, Scope
from cq.model.index_tuning import IndexTuning
from cq.model.language import language_of
from cq.parse import Listing

_LATE = (
    "the repository index was not ready within --timeout or `[index] question_wait_s`, "
    "whichever is longer; answered without it (the build goes on behind this search; "
    "`cq index` builds it at once)"
)


# Said on every such question: without it a user of a large tree never learns why its
# questions lack the index (the README's `cq index`).
_TOO_LARGE = (
    "the repository index of this tree is not built: it has more than {amount} of new "
    "source, more than a search indexes itself (CQ_INDEX_AUTO_BYTES); answered without it "
    "(`cq index` builds it, then every search keeps it current)"
)


_BUILDING = (
    "the repository index of this tree is being built ({amount} of source to index); "
    "answered without it: later questions use it once it is built (`cq index` builds it "
    "at once)"
)


_SAID_IN_MB = 100_000  # bytes from which megabytes with one decimal read more than "0.0 MB"


def _amount(size: int) -> str:
    """Megabytes, as the limits are set; a limit set lower (a few kB) in bytes."""
    return f"{size / 1e6:.1f} MB" if size >= _SAID_IN_MB else f"{size:,} bytes"


class Skipped(msgspec.Struct, frozen=True, kw_only=True):
    """More new source than a search indexes itself: more than ``limit`` bytes."""

    limit: int


class Building(msgspec.Struct, frozen=True, kw_only=True):
    """A first build too large to wait for: it goes on behind the search."""

    source_bytes: int  # new source the build had to index when the search started


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
        scope: Scope,
        progress: Progress,
        tuning: IndexTuning,
        listing: Listing | None = None,
        deadline: float | None = None,
        after: threading.Event | None = None,
    ) -> None:
        self.scope = scope  # which files (the search's --in, globs, language) and its caps
        self.listing = listing  # the search's list of the tree's files
        self.after = after  # set when the update may list the tree (``start``)
        self.progress = progress
        self.tuning = tuning
        # How long the question waits for its index from the search's start, and
        # time.monotonic() when that runs out (``deadline``: the search's --timeout's; None:
        # never).
        timeout = scope.limits.timeout_seconds
        self.span = max(timeout, tuning.question_wait_s)
        self.deadline = (
            deadline + (self.span - timeout)
            if deadline is not None and math.isfinite(deadline)
            else None
        )
        self.abandoned = threading.Event()
        # The ways to an index, in order: the cache's, the cache's discarded and built again,
        # one in memory (as --no-cache); a way that fails gives its turn to the next.
        self.ways = ["cache", "discard", "memory"] if scope.use_cache else ["memory"]
        self.notice = ""  # one line for the user: what went wrong with the index
        self.outcome: tuple[OpenIndex, IndexUpdate] | Skipped | BaseException | None = None
        self.late = False  # the update was not done (or was cut short) by the deadline
        self.sized = threading.Event()  # the update knows how much new source it indexes
        self.new_bytes = 0
        # A daemon: a search that fails elsewhere or exits early does not wait for it (tantivy
        # commits atomically, so an update cut short leaves the index as last committed).
        self.thread = threading.Thread(target=self._run, name="cq-index-update", daemon=True)

    @classmethod
    def start(
        cls,
        scope: Scope,
        progress: Progress,
        tuning: IndexTuning,
        listing: Listing | None = None,
        deadline: float | None = None,
        *,
        after: threading.Event | None = None,
    ) -> IndexUpdateRun:
        """The update, running; it lists the tree once ``after`` is set (the caller sets it
        whatever happens), so that another scan of the tree does not run beside it."""
        run = cls(scope, progress, tuning, listing, deadline, after)
        run.thread.start()
        return run

    def _run(self) -> None:
        try:
            if self.after is not None:
                self.after.wait()
            self.outcome = self._next_way()
        except BaseException as exc:  # a cancelled search: re-raised in the search's thread
            self.outcome = exc
        finally:
            self.sized.set()

    @property
    def background(self) -> bool:
        """A first build too large for the search to wait for (known once ``sized``)."""
        limit = self.tuning.background_build_bytes
        return bool(limit) and self.new_bytes > limit

    def _sized(self, new_bytes: int) -> bool:
        self.new_bytes = new_bytes
        self.sized.set()
        return self.background

    def build_behind(self) -> None:
        """The search is over: a first build too large to wait for, or one its deadline cut
        (``late``), goes on in a process of its own (``behind.py``), so that the next
        question finds the index whole instead of building another share of it."""
        if self.background or self.late:
            from cq.index.behind import start

            start(Path(self.scope.root), self.tuning)

    def _next_way(self, failure: str = "") -> tuple[OpenIndex, IndexUpdate] | Skipped | None:
        """The index by the first way left that works (None: none did, ``notice`` says why);
        ``failure``: why the way before failed. A failure of tantivy, a Rust panic
        included, is never the search's failure."""
        while self.ways:
            way = self.ways.pop(0)
            try:
                if way == "discard":
                    discard(index_dir(Path(self.scope.root)), self.tuning.lock_wait_s)
                outcome = self._update(persist=way != "memory")
            except TooLarge as exc:
                self.notice = _TOO_LARGE.format(amount=_amount(exc.limit))
                return Skipped(limit=exc.limit)
            except Deferred:
                return None
            except Late:
                self.notice, self.late = _LATE, self.scope.use_cache
                return None
            except Busy as exc:
                self.notice = f"{exc}; answered without it"
                return None
            except BaseException as exc:
                if not engine_failed(exc):
                    raise
                failure = describe(exc)
                continue
            if failure:
                done = "built again" if way == "discard" else "indexed in memory for this search"
                self.notice = f"the repository index failed ({failure}): {done}"
            elif outcome[1].notice:
                self.notice = outcome[1].notice
            return outcome
        self.notice = f"the repository index failed ({failure}); answered without it"
        return None

    def _update(self, persist: bool) -> tuple[OpenIndex, IndexUpdate]:
        """A search builds the index on its own up to ``index.auto_build_bytes`` of new
        source; a bigger tree is indexed only by an explicit ``cq index``, then kept current
        by every search. The build stops at its share of the search's deadline; a first
        build too large to wait for is left to ``behind.py`` (never --no-cache's, in memory:
        that one is built here, and nobody waits to hear its size)."""
        if not persist:
            self.sized.set()
        return update_index(
            Path(self.scope.root),
            self._progress,
            persist=persist,
            build_limit=self.tuning.auto_build_bytes,
            tuning=self.tuning,
            listing=self.listing,
            deadline=self._build_deadline(),
            sized=self._sized if persist else None,
        )

    def _build_deadline(self) -> float | None:
        if self.deadline is None:
            return None
        return self.deadline - self.span * (1.0 - self.tuning.build_timeout_share)

    def _progress(self, status: str) -> None:
        if self.abandoned.is_set():  # stop before the commit: nothing is half-written
            raise SearchCancelledError("index update abandoned")
        self.progress(status)

    def abandon(self) -> None:
        """The search ends without consulting: stop at the update's next checkpoint."""
        self.abandoned.set()

    def consult(
        self, question: Question, terms: tuple[str, ...]
    ) -> Evidence | Skipped | Building | None:
        """The index's files and units for the ``question`` and the rewriter's ``terms``
        (``Skipped``: too much new source for a search to index; ``Building``: a first build
        going on behind the search; None: no index to ask, and ``notice`` says why when
        something went wrong). The search waits for the update up to its deadline; one not
        done by then (or cut short by it) is not asked."""
        waiting = time.perf_counter()
        left = None if self.deadline is None else max(0.0, self.deadline - time.monotonic())
        self.sized.wait(left)
        if self.background:
            self.notice = _BUILDING.format(amount=_amount(self.new_bytes))
            return Building(source_bytes=self.new_bytes)
        left = None if self.deadline is None else max(0.0, self.deadline - time.monotonic())
        self.thread.join(left)
        waited = time.perf_counter() - waiting
        if self.thread.is_alive():
            self.notice, self.late = _LATE, self.scope.use_cache
            return None
        outcome = self.outcome
        if isinstance(outcome, BaseException):
            raise outcome
        words = asked_words(question, terms, self.tuning)
        while True:
            if outcome is None or isinstance(outcome, Skipped):
                return outcome
            opened, update = outcome
            if update.partial:
                self.notice, self.late = _LATE, self.scope.use_cache
                return None
            asked = time.perf_counter()
            try:
                hits = ask(opened.index, opened.manifest, question, terms, self.tuning, words)
                break
            except BaseException as exc:
                if not engine_failed(exc):
                    raise
                outcome = self._next_way(describe(exc))  # built again: the search needs it now
        keep = _in_scope(self.scope)
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


def _in_scope(scope: Scope) -> Callable[[str], bool]:
    """The search's language, ``--in``, ``--include`` and ``--exclude`` as a path test,
    the globs read as rg reads the ``--glob`` list cq hands it (``candidates.scope_args``)."""
    globs = (*scope.include, *("!" + g for g in scope.exclude))
    whitelist = any(not g.startswith("!") for g in globs)

    def keep(path: str) -> bool:
        if language_of(path, scope.lang) is None or not in_part(path, scope.in_dir):
            return False
        name = posixpath.basename(path)
        for glob in reversed(globs):  # rg: the last glob that matches decides
            negated = glob.startswith("!")
            if _match(path, name, glob[1:] if negated else glob):
                return not negated
        return not whitelist  # matched by none: searched unless some glob names what is

    return keep


def _match(path: str, name: str, pattern: str) -> bool:
    if pattern.startswith("/"):  # anchored at the root, as rg reads it (cq.confine)
        return fnmatch.fnmatch(path, pattern.lstrip("/"))
    return fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(name, pattern)
