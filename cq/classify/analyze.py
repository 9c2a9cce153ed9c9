"""Parse one file and build its records: the unit of work a pool worker runs.

Pure of any cache or pool concern: the file's bytes (as the search's ``Corpus`` read and
hashed them: a worker never reads the file itself) in, records out. A Python file whose hits
sit in a small part of it is parsed as slices around them (``slices.py``); a slice that does
not parse sends the file to a whole parse, in the same task. Safe to run in a spawned worker.
"""

from __future__ import annotations

import msgspec

from cq.classify.node_tier import classify_from_node
from cq.classify.records import FileRecords, StoredRecords, unparsed
from cq.classify.slice_plan import Slice, SlicePlan
from cq.classify.slices import python_slices
from cq.model import Classification
from cq.model.tuning import ClassifyTuning, ParseTuning

SLICE_FAILED = "slice does not parse"  # then the file is parsed whole


class FileTask(msgspec.Struct, frozen=True, array_like=True):
    """One file to analyze. ``hits`` (byte spans, in the order of the file's matches) let a
    Python file be parsed as slices; ``plan``: its slices planned already (``planned``)."""

    rel: str
    language: str
    data: bytes
    hits: list[tuple[int, int]] = []
    plan: SlicePlan | None = None


def planned(task: FileTask, caps: ParseTuning) -> FileTask:
    """The task with its slices planned (or, when it is to be parsed whole, without hits)."""
    if task.plan is not None or not task.hits:
        return task
    plan = python_slices(task.data, task.hits, caps) if task.language == "python" else None
    if plan is None:
        return msgspec.structs.replace(task, hits=[])
    return msgspec.structs.replace(task, plan=plan)


def parse_bytes(task: FileTask) -> int:
    """What a planned task parses: its slices (with their stand-in lines), or the file."""
    if task.plan is None:
        return len(task.data)
    return sum(s.end - s.start + len(s.header) + len(s.trailer) for s in task.plan.slices)


class SlicedRecords(msgspec.Struct, frozen=True, array_like=True):
    """Records of each slice, and for each hit (in order) the index of its slice."""

    owners: list[int]
    pieces: list[StoredRecords]


class FileAnalysis(msgspec.Struct, frozen=True, array_like=True):
    """Whole-file ``records``, or ``sliced`` records when slices answered every hit."""

    records: StoredRecords | None
    sliced: SlicedRecords | None = None
    slices_parsed: int = 0
    slices_failed: bool = False
    bytes_parsed: int = 0  # the slices with their stand-in lines, or the whole file


def analyze_file(task: FileTask, caps: ParseTuning) -> FileAnalysis:
    """Records of one file, sliced when its hits allow (``caps`` bound both)."""
    task = planned(task, caps)
    plan = task.plan
    if plan is None:
        return _whole(task, caps)
    spans = plan.hit_spans(task.hits)
    pieces = [
        slice_records(task.language, task.data, p, caps, span)
        for p, span in zip(plan.slices, spans, strict=True)
    ]
    sliced = parse_bytes(task)
    if all(p.reason != SLICE_FAILED for p in pieces):
        records = SlicedRecords(plan.owners, pieces)
        return FileAnalysis(None, records, slices_parsed=len(pieces), bytes_parsed=sliced)
    whole = _whole(task, caps)
    return msgspec.structs.replace(
        whole, slices_parsed=len(pieces), slices_failed=True, bytes_parsed=sliced + len(task.data)
    )


def node_verdicts(
    task: FileTask, spans: list[tuple[int, int]], caps: ParseTuning, t: ClassifyTuning
) -> list[Classification]:
    """The node tier for ``spans`` of a file (the whole file is parsed: its records give
    each verdict's scope); unparsed files give none."""
    if len(task.data) > caps.max_parse_bytes:
        return []
    try:
        tree = _parse(task.language, task.data)
        records = _build(task.language, tree, caps)
    except RecursionError:
        return []
    return [classify_from_node(tree, a, b, records.scope_at(a), t) for a, b in spans]


def _whole(task: FileTask, caps: ParseTuning) -> FileAnalysis:
    if len(task.data) > caps.max_parse_bytes:
        return FileAnalysis(unparsed(task.language, "file too large to parse").stored())
    try:
        tree = _parse(task.language, task.data)
        records = _build(task.language, tree, caps)
    except RecursionError:
        stored = unparsed(task.language, "nesting too deep to parse").stored()
        return FileAnalysis(stored, bytes_parsed=len(task.data))
    return FileAnalysis(records.stored(), bytes_parsed=len(task.data))


def slice_records(
    language: str,
    data: bytes,
    piece: Slice,
    caps: ParseTuning,
    hits: tuple[int, int] | None = None,
) -> StoredRecords:
    """A slice of ``data`` parsed on its own, its records shifted to the file's offsets (a
    small slice of a huge file is parsed all the same).

    ``hits``: the byte span (of the file) holding the hits these records answer for. Sliced
    records are cached for exactly those hits, so only the syntax that touches the span is
    recorded (every record a lookup inside it can reach: the scopes, regions and tokens that
    contain or start in it); the rest of the slice costs a parse, not records."""
    source = piece.source(data)
    if len(source) > caps.max_parse_bytes:
        return unparsed(language, "file too large to parse").stored()
    within = None if hits is None else (hits[0] - piece.shift, hits[1] - piece.shift)
    try:
        tree = _parse(language, source)
        if tree.root_node.has_error:
            return unparsed(language, SLICE_FAILED).stored()
        return _build(language, tree, caps, within, piece.shift).stored()
    except RecursionError:
        return unparsed(language, "nesting too deep to parse").stored()


def _parse(language: str, data: bytes):
    from cq.parse.trees import ts_parser

    return ts_parser(language).parse(data)


def _build(
    language: str,
    tree,
    caps: ParseTuning,
    within: tuple[int, int] | None = None,
    shift: int = 0,
) -> FileRecords:
    """Records of ``tree``; ``shift``: added to every offset (a Python slice parsed alone)."""
    if language == "python":
        from cq.classify.python_records import build_python_records

        return build_python_records(tree, within, shift)
    from cq.classify.rust_records import build_rust_records

    return build_rust_records(tree, caps.macro_depth)


def analyze_batch(tasks: list[FileTask], caps: ParseTuning) -> list[bytes]:
    """Pool entry point: analyses encoded as msgpack (cheap to send back)."""
    encoder = msgspec.msgpack.Encoder()
    return [encoder.encode(analyze_file(task, caps)) for task in tasks]
