"""The report's sections, computed from the shown findings and counts over all findings.

Every section lists findings in rank order: grouping and limits never reorder results.
"""

from __future__ import annotations

from collections import Counter

from cq.model import (
    FileCount,
    Finding,
    FindingList,
    HotFiles,
    KindCounts,
    ScopeGroup,
    TopContexts,
)

CATEGORY_ORDER = (
    "definition",
    "callsite",
    "import",
    "from_import",
    "assignment",
    "reference",
    "annotation",
    "text_match",
    "docstring_match",
    "comment_match",
    "string_match",
)
IMPORT_KINDS = ("import", "from_import")
NON_CODE_KINDS = ("docstring_match", "comment_match", "string_match")
TOP_GROUPS = 5
GROUP_MEMBERS = 4
HOT_FILES = 5
RELEVANT_FILES = 10  # a question or issue is answered by files; the first ten, in rank order


def top_contexts(shown: tuple[Finding, ...]) -> TopContexts:
    """Shown findings grouped by ``(containing scope, file)``; a group ranks by its best hit."""
    order: list[tuple[str | None, str]] = []
    members: dict[tuple[str | None, str], list[int]] = {}
    for index, f in enumerate(shown):
        key = (f.containing_scope, f.file)
        if key not in members:
            order.append(key)
            members[key] = []
        members[key].append(index)
    groups = tuple(
        ScopeGroup(
            scope=scope,
            file=file,
            finding_indexes=tuple(members[(scope, file)][:GROUP_MEMBERS]),
            total=len(members[(scope, file)]),
        )
        for scope, file in order[:TOP_GROUPS]
    )
    return TopContexts(groups=groups, total_groups=len(order))


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


def hot_files(ranked: list[Finding], *, by_rank: bool) -> HotFiles:
    """Files with the most findings, ties by path; or (``by_rank``) in the order of their
    best-ranked finding, which is what a rewritten question or issue asks: where to look."""
    by_file = Counter(f.file for f in ranked)
    if by_rank:
        order = list(dict.fromkeys(f.file for f in ranked))[:RELEVANT_FILES]
        return HotFiles(
            title="Relevant Files",
            order="rank",
            files=tuple(FileCount(file=path, count=by_file[path]) for path in order),
            total_files=len(by_file),
        )
    best = sorted(by_file.items(), key=lambda item: (-item[1], item[0]))[:HOT_FILES]
    return HotFiles(
        files=tuple(FileCount(file=path, count=n) for path, n in best), total_files=len(by_file)
    )
