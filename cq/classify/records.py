"""Per-file records: everything needed to classify any hit in a file without parsing it again.

A ``FileRecords`` holds, as parallel sorted arrays of byte offsets:
- *tokens*: identifier spans with a definite role (definition name, callee, assignment target,
  parameter, decorator);
- *segments*: the file cut into disjoint pieces labelled by the innermost region around them
  (comment, docstring, string, annotation, import, attribute), code holes such as f-string
  interpolations being unlabelled;
- *scopes*: the file cut into disjoint pieces labelled by the innermost enclosing
  def/class/fn/impl/mod, as a qualified name.
Records go into the persistent cache as ``StoredRecords`` (arrays packed as int32 bytes, so
loading one is a few memcpys), keyed by content hash.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from typing import Any, get_args

import msgspec

from cq.model import Category

# Category codes stored in records (small ints keep the cache compact): positions in the
# ``Category`` literal, so the model is the one list of categories.
CATEGORIES: tuple[Category, ...] = get_args(Category)
CODE = {name: i for i, name in enumerate(CATEGORIES)}
NO_REGION = -1


_INT_FIELDS = (
    "token_starts",
    "token_ends",
    "token_cats",
    "token_kinds",
    "seg_starts",
    "seg_ends",
    "seg_cats",
    "seg_kinds",
    "scope_starts",
    "scope_ends",
    "scope_ids",
)


class StoredRecords(msgspec.Struct, frozen=True, array_like=True):
    """``FileRecords`` as cached: the int arrays packed as int32 bytes (fast to load)."""

    language: str
    reason: str | None
    kinds: list[str]
    scope_names: list[str]
    arrays: list[bytes]  # in _INT_FIELDS order
    error_nodes: int = 0


class FileRecords:
    """Classification data of one file (see module docstring); lookups are bisections."""

    __slots__ = ("error_nodes", "kinds", "language", "reason", "scope_names", *_INT_FIELDS)

    def __init__(
        self,
        language: str,
        reason: str | None,
        kinds: list[str],
        scope_names: list[str],
        arrays: list[array[int]],
        error_nodes: int = 0,
    ) -> None:
        self.language = language
        self.reason = reason  # set when the file could not be parsed: lookups then miss
        self.kinds = kinds  # node-kind names; tokens and segments index into it
        self.scope_names = scope_names
        self.error_nodes = error_nodes
        for name, values in zip(_INT_FIELDS, arrays, strict=True):
            setattr(self, name, values)

    def stored(self) -> StoredRecords:
        packed = [getattr(self, name).tobytes() for name in _INT_FIELDS]
        return StoredRecords(
            self.language, self.reason, self.kinds, self.scope_names, packed, self.error_nodes
        )

    @classmethod
    def from_stored(cls, stored: StoredRecords) -> FileRecords:
        """Loaded without the constructor's lists (a warm audit search loads 15,800)."""
        records = cls.__new__(cls)
        records.language, records.reason = stored.language, stored.reason
        records.kinds, records.scope_names = stored.kinds, stored.scope_names
        records.error_nodes = stored.error_nodes
        for name, blob in zip(_INT_FIELDS, stored.arrays, strict=True):
            values = array("i")
            values.frombytes(blob)
            setattr(records, name, values)
        return records

    def token_at(self, start: int) -> int | None:
        """Index of the role token starting exactly at ``start``."""
        i = bisect_right(self.token_starts, start) - 1
        if i >= 0 and self.token_starts[i] == start:
            return i
        return None

    def token_ending_at(self, end: int, not_before: int) -> int | None:
        """Index of the role token ending at ``end`` and starting at or after ``not_before``."""
        i = bisect_right(self.token_starts, end) - 1
        while i >= 0 and self.token_starts[i] >= not_before:
            if self.token_ends[i] == end:
                return i
            i -= 1
        return None

    def segment_at(self, pos: int) -> int | None:
        """Index of the labelled segment containing byte ``pos``, if any."""
        i = bisect_right(self.seg_starts, pos) - 1
        if i >= 0 and pos < self.seg_ends[i] and self.seg_cats[i] != NO_REGION:
            return i
        return None

    def scope_at(self, pos: int) -> str | None:
        """Qualified name of the innermost scope containing ``pos`` (None at module level)."""
        i = bisect_right(self.scope_starts, pos) - 1
        if i >= 0 and pos < self.scope_ends[i] and self.scope_ids[i] != NO_REGION:
            return self.scope_names[self.scope_ids[i]]
        return None


def unparsed(language: str, reason: str) -> FileRecords:
    """Records of a file that could not be parsed: every lookup misses."""
    return FileRecords(language, reason, [], [], [array("i") for _ in _INT_FIELDS])


def flatten(regions: list[tuple[int, int, int]]) -> tuple[list[int], list[int], list[int]]:
    """Cut properly nested (start, end, label) regions into disjoint innermost-label pieces.

    Gaps between regions are omitted; a gap inside a region takes the enclosing label.
    Labels may be NO_REGION (a code hole inside a string, for example).
    """
    starts: list[int] = []
    ends: list[int] = []
    labels: list[int] = []
    stack: list[tuple[int, int]] = []  # (end, label)
    pos = 0
    regions.sort(key=lambda r: (r[0], -r[1]))
    for start, end, label in regions:
        while stack and stack[-1][0] <= start:
            top_end, top_label = stack.pop()
            if pos < top_end:
                starts.append(pos)
                ends.append(top_end)
                labels.append(top_label)
                pos = top_end
        if stack:
            if pos < start:
                starts.append(pos)
                ends.append(start)
                labels.append(stack[-1][1])
            if end > stack[-1][0]:
                end = stack[-1][0]  # malformed overlap (error recovery): clip to the parent
        if start > pos:
            pos = start
        stack.append((end, label))
    while stack:
        top_end, top_label = stack.pop()
        if pos < top_end:
            starts.append(pos)
            ends.append(top_end)
            labels.append(top_label)
            pos = top_end
    return starts, ends, labels


class RecordsBuilder:
    """Collects tokens, regions and scopes while a language module walks a tree."""

    def __init__(self, language: str) -> None:
        self.language = language
        self.kinds: list[str] = []
        self._kind_index: dict[str, int] = {}
        self.tokens: dict[int, tuple[int, int, int]] = {}  # start -> (end, cat, kind)
        self.regions: list[tuple[int, int, int]] = []  # (start, end, packed cat/kind)
        self.scopes: list[tuple[int, int, str]] = []  # (start, end, simple name)
        self.error_nodes = 0

    def kind(self, name: str) -> int:
        index = self._kind_index.get(name)
        if index is None:
            index = self._kind_index[name] = len(self.kinds)
            self.kinds.append(name)
        return index

    def token(self, start: int, end: int, category: Category, kind: str) -> None:
        """A role token; the first role recorded for a span wins."""
        self.tokens.setdefault(start, (end, CODE[category], self.kind(kind)))

    def tokens_of(self, nodes: list[Any], category: Category, kind: str) -> None:
        """``token`` for many syntax nodes of one kind (the hot path of a build)."""
        value_cat, value_kind = CODE[category], self.kind(kind)
        tokens = self.tokens
        for node in nodes:
            start = node.start_byte
            if start not in tokens:
                tokens[start] = (node.end_byte, value_cat, value_kind)

    def region(self, start: int, end: int, category: Category | None, kind: str) -> None:
        """A labelled region; ``category`` None marks a code hole (f-string interpolation)."""
        label = NO_REGION if category is None else CODE[category] * 4096 + self.kind(kind)
        self.regions.append((start, end, label))

    def regions_of(self, nodes: list[Any], category: Category | None, kind: str) -> None:
        """``region`` for many syntax nodes of one kind."""
        label = NO_REGION if category is None else CODE[category] * 4096 + self.kind(kind)
        self.regions.extend([(node.start_byte, node.end_byte, label) for node in nodes])

    def scope(self, start: int, end: int, name: str) -> None:
        self.scopes.append((start, end, name))

    def build(self, qualify: str) -> FileRecords:
        """Freeze into ``FileRecords``; ``qualify`` joins nested scope names ("." or "::")."""
        token_starts = sorted(self.tokens)
        seg_starts, seg_ends, seg_labels = flatten(self.regions)
        names: list[str] = []
        scope_regions: list[tuple[int, int, int]] = []
        stack: list[tuple[int, str]] = []  # (end, qualified)
        for start, end, name in sorted(self.scopes, key=lambda s: (s[0], -s[1])):
            while stack and stack[-1][0] <= start:
                stack.pop()
            qualified = f"{stack[-1][1]}{qualify}{name}" if stack else name
            stack.append((end, qualified))
            scope_regions.append((start, end, len(names)))
            names.append(qualified)
        scope_starts, scope_ends, scope_ids = flatten(scope_regions)
        ints = [
            token_starts,
            [self.tokens[s][0] for s in token_starts],
            [self.tokens[s][1] for s in token_starts],
            [self.tokens[s][2] for s in token_starts],
            seg_starts,
            seg_ends,
            [NO_REGION if lab == NO_REGION else lab // 4096 for lab in seg_labels],
            [NO_REGION if lab == NO_REGION else lab % 4096 for lab in seg_labels],
            scope_starts,
            scope_ends,
            scope_ids,
        ]
        return FileRecords(
            self.language,
            None,
            self.kinds,
            names,
            [array("i", values) for values in ints],
            self.error_nodes,
        )
