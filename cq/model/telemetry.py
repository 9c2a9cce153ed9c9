"""What the stages did, as counts: ``Summary.telemetry``, printed with ``--explain``.

Each stage fills its own fields and the pipeline joins them (``plus``). The facts a later
module acts on are typed (``TargetCounts``: how many uses resolve to the Answer's definition;
``IndexHeld``: whether the index was stale); the rest are counts by label (a status, a
stage, a reason), which are only printed. A field left ``None`` is left out of the JSON, so
the JSON names the same keys a stage that did not run never wrote.
"""

from __future__ import annotations

import msgspec


class TargetCounts(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Shown uses resolved to the target definition (a dotted query's, a callers question's),
    and by whom (``cq.semantic.ranking``)."""

    resolved_to_target: int
    resolved_elsewhere: int
    resolved_to_target_by_syntax: int = 0
    resolved_to_target_by_unique_name: int = 0
    callers_question: int = 0  # 1: the target is the function a callers question names
    uses: int | None = None  # a dotted query: the shown uses of its member name


class IndexHeld(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What the repository index held when consulted, or the source it skipped building."""

    documents: int | None = None
    files: int | None = None
    stale: int = 0  # 1: another process held its writer, answered as last committed
    # more new source than this (``index.auto_build_bytes``) to build during a search: not how
    # much more, counting stops there (`cq index` builds it)
    skipped_over_bytes: int | None = None
    building_source_bytes: int | None = None  # a first build going on behind the search
    # why this answer went without the index the search meant to consult (one line, also the
    # report's): not built yet, not ready within --timeout, or failing; None: it was consulted
    unused: str | None = None


class Telemetry(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One search's stage counts; the JSON names are the stages' (``enrichment.python``)."""

    enrichment_python: dict[str, int] | None = msgspec.field(default=None, name="enrichment.python")
    enrichment_rust: dict[str, int] | None = msgspec.field(default=None, name="enrichment.rust")
    # a wait the clock cut, by the wait ("no answer within the wait of 500 ms": 3)
    semantic_failed: dict[str, int] | None = msgspec.field(default=None, name="semantic.failed")
    semantic: dict[str, int] | None = None  # Pyrefly's answers by status
    semantic_target: TargetCounts | None = msgspec.field(default=None, name="semantic.target")
    classification_fallbacks: dict[str, int] | None = None  # by reason
    index: IndexHeld | None = None

    def plus(self, other: Telemetry) -> Telemetry:
        """These counts with ``other``'s fields set on top (stages fill disjoint fields)."""
        set_there = {
            name: getattr(other, name)
            for name in other.__struct_fields__
            if getattr(other, name) is not None
        }
        return msgspec.structs.replace(self, **set_there)
