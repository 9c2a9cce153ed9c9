"""The repository index: what a question is about, beyond the patterns rg matched.

In: a rewritten search (its scope, the rewriter's terms) and rg's ranked findings; the
search starts an ``IndexRun`` once it knows it is a rewritten question, so the index is
brought up to date while rg and classification run, and fuses at the end. Out:
``IndexFusion``, the findings in a file order fusing rg's with the index's, files only the
index found represented by their best unit's definition line, the Relevant Functions, and
``summary.telemetry.index``. Identifier searches never get here.

The index is tantivy's (BM25 over on-disk segments) in cq's cache dir, one per root and schema
version, documents at two granularities: files and code units. Start with ``build.py`` (keep it
current), then ``query.py`` (ask it), ``fuse.py`` (rank fusion, shared with the tuning bench)
and ``apply.py`` (findings and functions). ``units.py`` says what a unit is, ``schema.py`` how
code is tokenized. Nothing on disk is trusted: ``opening.py`` checks an index before tantivy
reads it (``integrity.py``: regular files only, a seal of every segment file written with
the manifest) and rebuilds a damaged one; ``behind.py`` builds a large tree's first index in
a process of its own while the first questions answer without it; ``evidence.py`` turns any
failure of the engine, a Rust panic included, into a rebuild or a search without the index,
never a failed one.

Why tantivy (PyPI ``tantivy``, the official bindings of the Rust engine): a real search engine
with on-disk segments, BM25, per-field boosts and add/delete by term, so the index is built
once and kept current file by file instead of re-ranking every file on every question.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

from cq.model import (
    Finding,
    Focus,
    IndexHeld,
    Question,
    RelevantFunction,
    RewriteSummary,
    RunCounters,
    Scope,
    Telemetry,
)
from cq.model.dense import DenseRanker
from cq.model.tuning import Tuning
from cq.parse import Corpus, Listing
from cq.rank import called_names


class IndexFusion(msgspec.Struct, frozen=True, kw_only=True):
    """The fused findings and functions; ``telemetry`` (what the index holds) goes to the
    summary, ``counters`` and ``timings_ms`` (what this run did) to the volatile ``run``."""

    findings: list[Finding]
    functions: tuple[RelevantFunction, ...] = ()
    # The (file, line) of the Answer's candidate's definition among ``findings``, which
    # ``cq.rank.final_order`` keeps within the report's limit (a smaller ``--limit`` must not
    # change the Answer); None when the fusion has no candidate with a definition line.
    answer_at: tuple[str, int] | None = None
    telemetry: Telemetry = msgspec.field(default_factory=Telemetry)
    counters: RunCounters = msgspec.field(default_factory=RunCounters)
    timings_ms: dict[str, float] = {}


def consults_index(question: Question, rewrite: RewriteSummary | None) -> bool:
    """Whether the index has a say (unless the search said ``--no-index``): a rewritten
    search that may use the index.

    A text read as a question is one even when the rewriter found no pattern in it (none of
    its words named or mapped onto a defined name): the index still matches its words. On
    rust_tuning 123 the offline rewriter found none for 35 texts before its vocabulary held
    Rust names, and those searches answered nothing. An identifier search that found nothing
    and whose rewrite found nothing either (trigger ``zero_results``) stays out, and so does a
    callers question whose patterns are the names it writes ("who calls parse_subcommand?"):
    it asks for a name's calls, not for code about its words. A one-line question with no word
    to look for ("who calls?", ``Question.says_nothing``) stays out too: BM25 would still rank
    something for "calls" and make it the Answer.
    """
    if rewrite is None or question.says_nothing:
        return False
    asked = frozenset(rewrite.identifiers)
    if (
        asked
        and question.intent == "callers"
        and called_names(question, asked, rewrite.subject) >= asked
    ):
        return False
    return rewrite.applied or rewrite.trigger in ("heuristic", "forced")


class IndexRun:
    """The index's part of one search: ``start`` it as soon as the search is known to be a
    question (the update runs in a thread beside the rewrite, rg and classification, see
    ``evidence.py``), then ``fuse`` once rg's findings are ranked; ``close`` when the search
    ends either way."""

    def __init__(
        self,
        scope: Scope,
        question: Question,
        progress: Callable[[str], None],
        tuning: Tuning,
        listing: Listing | None = None,
        deadline: float | None = None,
        after: threading.Event | None = None,
    ) -> None:
        from cq.index.evidence import IndexUpdateRun

        self.question = question
        self.tuning = tuning
        self.update = IndexUpdateRun.start(
            scope, progress, tuning.index, listing, deadline, after=after
        )
        self.consulted = False

    @classmethod
    def start(
        cls,
        scope: Scope,
        use_index: bool,
        question: Question,
        progress: Callable[[str], None],
        tuning: Tuning,
        rewrite: RewriteSummary | None = None,
        listing: Listing | None = None,
        deadline: float | None = None,
        *,
        after: threading.Event | None = None,
    ) -> IndexRun | None:
        """Start the update of a search that will consult the index: one being rewritten
        (``rewrite`` None: started beside the rewrite, see ``kept``) or rewritten (None when
        ``rewrite`` was not applied, or with ``--no-index``). ``listing``: the search's list
        of the tree's files (its ``Corpus``'s); ``deadline``: when the search's --timeout
        runs out (``time.monotonic``): the search answers without an index not ready by
        then, or by ``index.question_wait_s`` from its start when that is later
        (``evidence.py``); ``after``: the update lists the tree once it is set."""
        if not use_index or (rewrite is not None and not consults_index(question, rewrite)):
            return None
        return cls(scope, question, progress, tuning, listing, deadline, after)

    def kept(self, rewrite: RewriteSummary) -> IndexRun | None:
        """This run if the rewritten search consults the index; else it stops (``close``)."""
        if consults_index(self.question, rewrite):
            return self
        self.close()
        return None

    def building(self) -> bool:
        """Whether this search answers without the index, its first build going on behind
        the search (too large to wait for, ``evidence.py``); known once the tree is listed."""
        update = self.update
        left = None if update.deadline is None else max(0.0, update.deadline - time.monotonic())
        update.sized.wait(left)
        return update.background

    def fuse(
        self,
        rewrite: RewriteSummary,
        ranked: list[Finding],
        corpus: Corpus,
        focus: Focus,
        dense: DenseRanker | None = None,
        *,
        explain: bool = False,
    ) -> IndexFusion:
        """Fuse the index into the rewritten search's ``ranked`` findings (``focus``: the
        search's, as ranked). The lines of files it shows come from the search's ``corpus``;
        ``dense``: the optional dense signal's ranking of the first fused files (``cq/embed``),
        fused in too; ``explain``: each finding says its file's place in the fused order."""
        from cq.index.apply import fuse_findings
        from cq.index.evidence import Building, Skipped
        from cq.terminal import warn

        self.consulted = True
        evidence = self.update.consult(self.question, rewrite.identifiers + rewrite.literals)
        if self.update.notice:  # the index on disk was damaged, unusable or not ready
            warn(self.update.notice)
        # An answer without the index says so in the report itself (markdown and JSON), not
        # only on stderr: a later run of the same question, with the index, may answer
        # differently.
        unused = self.update.notice or "the repository index could not be consulted"
        if evidence is None:
            return IndexFusion(findings=ranked, telemetry=Telemetry(index=IndexHeld(unused=unused)))
        if isinstance(evidence, Skipped):  # `cq index` builds it; then every search keeps it
            skipped = IndexHeld(skipped_over_bytes=evidence.limit, unused=unused)
            return IndexFusion(findings=ranked, telemetry=Telemetry(index=skipped))
        if isinstance(evidence, Building):  # a first build goes on behind the search
            building = IndexHeld(building_source_bytes=evidence.source_bytes, unused=unused)
            return IndexFusion(findings=ranked, telemetry=Telemetry(index=building))
        findings, functions, answer_at = fuse_findings(
            corpus,
            ranked,
            evidence,
            explain,
            self.tuning,
            question=self.question,
            tests_wanted=focus == "tests",
            dense=dense,
        )
        update = evidence.update
        # stale: another process held the writer, the index as last committed
        held = IndexHeld(documents=update.documents, files=update.files, stale=int(update.stale))
        return IndexFusion(
            findings=findings,
            functions=functions,
            answer_at=answer_at,
            telemetry=Telemetry(index=held),
            counters=RunCounters(index_files_updated=update.files_updated + update.files_removed),
            timings_ms={"index": evidence.milliseconds, "index.wait": evidence.waited_ms},
        )

    def close(self) -> None:
        """The search is over: an update nobody consulted stops at its next checkpoint; a
        first build too large to wait for starts in a process of its own."""
        if not self.consulted:
            self.update.abandon()
        else:
            self.update.build_behind()


def indexed_files(root: Path) -> tuple[dict[str, str], int] | None:
    """The files ``root``'s index holds (path -> content digest) and the mtime (ns) of the
    manifest saying so; None: no index yet. What the dense signal's build embeds."""
    from cq.index.location import index_dir
    from cq.index.manifest import read_manifest
    from cq.index.opening import MANIFEST

    path = index_dir(root) / MANIFEST
    stored = read_manifest(path)
    if stored is None:
        return None
    try:
        return {p: e.digest for p, e in stored.files.items()}, path.stat().st_mtime_ns
    except OSError:
        return None


__all__ = ["IndexFusion", "IndexRun", "indexed_files"]
