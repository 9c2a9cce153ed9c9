"""Tier 3: classify one hit from a file's cached ``FileRecords`` (no parse needed)."""

from __future__ import annotations

import re

from cq.classify.records import CATEGORIES, FileRecords
from cq.model import NON_CODE_CATEGORIES, Classification
from cq.model.tuning import ClassifyTuning

_IDENTIFIER = re.compile(r"[^\W\d]\w*(?:(?:\.|::)[^\W\d]\w*)*")


def classify_from_records(
    records: FileRecords, start: int, end: int, text: str, t: ClassifyTuning
) -> Classification | None:
    """The hit's category from records, or None when records cannot decide (non-identifier
    text in code, which the node tier handles). ``t`` gives each case's confidence."""
    scope = records.scope_at(start)
    seg = records.segment_at(start)
    if seg is not None:
        category = CATEGORIES[records.seg_cats[seg]]
        if category in NON_CODE_CATEGORIES:
            inside = end <= records.seg_ends[seg]
            confidence = t.records_non_code if inside else t.records_non_code_spanning
            return _verdict(records, category, confidence, records.seg_kinds[seg], scope)
    identifier = _IDENTIFIER.fullmatch(text) is not None
    token = records.token_at(start)
    if token is not None and records.token_ends[token] == end:
        return _token_verdict(records, token, t.records_token, scope)
    if identifier:
        last = records.token_ending_at(end, start)
        if last is not None:  # ``obj.method`` searched as one dotted name
            return _token_verdict(records, last, t.records_dotted, scope)
    if seg is not None:
        category = CATEGORIES[records.seg_cats[seg]]
        confidence = t.records_region_identifier if identifier else t.records_region_text
        return _verdict(records, category, confidence, records.seg_kinds[seg], scope)
    if identifier:
        return Classification(
            category="reference",
            confidence=t.records_reference,
            tier="records",
            node_kind="identifier",
            containing_scope=scope,
        )
    if token is not None:  # a longer literal that starts with a role token: ``foo(x``
        return _token_verdict(records, token, t.records_token_prefix, scope)
    return None


def _token_verdict(records: FileRecords, token: int, confidence: float, scope: str | None):
    return _verdict(
        records,
        CATEGORIES[records.token_cats[token]],
        confidence,
        records.token_kinds[token],
        scope,
    )


def _verdict(records: FileRecords, category, confidence: float, kind: int, scope: str | None):
    return Classification(
        category=category,
        confidence=confidence,
        tier="records",
        node_kind=records.kinds[kind] if kind >= 0 else None,
        containing_scope=scope,
    )
