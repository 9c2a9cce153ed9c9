"""The report's sections, computed from the shown findings and counts over all findings.

Every section lists findings in rank order: grouping and limits never reorder results.
"""

from __future__ import annotations

from collections import Counter

from cq.model import (
    CATEGORY_ORDER,
    NON_CODE_CATEGORIES,
    FileCount,
    Finding,
    FindingList,
    HotFiles,
    KindCounts,
    ScopeGroup,
    Tally,
    TopContexts,
)
from cq.model.tuning import ReportTuning

IMPORT_KINDS = ("import", "from_import")
NON_CODE_KINDS = NON_CODE_CATEGORIES


def top_contexts(shown: tuple[Finding, ...], t: ReportTuning) -> TopContexts:
    """Shown findings grouped by ``(containing scope, file)``, callsites that Pyrefly resolved
    to a definition in the root by that definition; a group ranks by its best hit."""
    order: list[tuple[str | None, str, str | None, bool]] = []
    members: dict[tuple[str | None, str, str | None, bool], list[int]] = {}
    for index, f in enumerate(shown):
        target = _resolved_call(f)
        unparsed = f.scope_unknown
        key = (
            (None, target[0], target[1], False)
            if target
            else (f.containing_scope, f.file, None, unparsed)
        )
        if key not in members:
            order.append(key)
            members[key] = []
        members[key].append(index)
    groups = tuple(
        ScopeGroup(
            scope=key[0],
            file=key[1],
            finding_indexes=tuple(members[key][: t.group_members]),
            total=len(members[key]),
            resolves_to=key[2],
            unparsed=key[3],
        )
        for key in order[: t.top_groups]
    )
    return TopContexts(groups=groups, total_groups=len(order))


def _resolved_call(f: Finding) -> tuple[str, str] | None:
    """(definition file, "file:line") of a callsite's resolved definition in the root."""
    semantic = f.enrichment.semantic if f.enrichment is not None else None
    target = semantic.definition if semantic is not None else None
    if f.category != "callsite" or target is None or target.file is None:
        return None
    return target.file, f"{target.file}:{target.line}"


def finding_list(
    title: str,
    categories: tuple[str, ...],
    shown: tuple[Finding, ...],
    counts: Counter[str],
    *,
    collapsed: bool = False,
) -> FindingList:
    """The shown findings of these categories, with how many exist in all."""
    return FindingList(
        title=title,
        categories=categories,
        finding_indexes=tuple(i for i, f in enumerate(shown) if f.category in categories),
        total=sum(counts[c] for c in categories),
        collapsed=collapsed,
    )


def kind_counts(counts: Counter[str]) -> KindCounts:
    """Non-zero counts per category in a fixed order, unknown categories last by name."""
    known = [c for c in CATEGORY_ORDER if counts[c]]
    extra = sorted(c for c in counts if c not in CATEGORY_ORDER and counts[c])
    return KindCounts(counts={c: counts[c] for c in known + extra})


def hot_files(tally: Tally, t: ReportTuning, *, by_rank: bool) -> HotFiles:
    """Files with the most findings, ties by path; or (``by_rank``) in the order of their
    best-ranked finding, which is what a rewritten question or issue asks: where to look."""
    by_file = tally.files
    if by_rank:
        order = tally.files_in_rank_order[: t.relevant_files]
        return HotFiles(
            title="Relevant Files",
            order="rank",
            files=tuple(FileCount(file=path, count=by_file[path]) for path in order),
            total_files=len(by_file),
        )
    best = sorted(by_file.items(), key=lambda item: (-item[1], item[0]))[: t.hot_files]
    return HotFiles(
        files=tuple(FileCount(file=path, count=n) for path, n in best), total_files=len(by_file)
    )
