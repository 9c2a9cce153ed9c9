"""Parse one file and build its records: the unit of work a pool worker runs.

Pure of any cache or pool concern: the file's bytes (as the search's ``Corpus`` read and
hashed them: a worker never reads the file itself) in, records out. A Python file whose hits
sit in a small part of it is parsed as slices around them (``slices.py``), all in one text;
slices that do not parse send the file to a whole parse, in the same task. Safe to run in a
spawned worker.
"""

from __future__ import annotations

from bisect import bisect_right

import msgspec

from cq.classify.node_tier import classify_from_node
from cq.classify.records import FileRecords, StoredRecords, unparsed
from cq.classify.slice_plan import SlicePlan
from cq.classify.slices import python_slices
from cq.model import Classification
from cq.model.tuning import ClassifyTuning, ParseTuning


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
    """Records of a file's slices parsed as one text (``sliced_records``), in that text's
    offsets, and for each hit (in order) what to subtract from its offsets in the file to
    look it up in them (its slice's place in the text)."""

    records: StoredRecords
    shifts: list[int]


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
    sliced = parse_bytes(task)
    records = sliced_records(task.language, task.data, plan, task.hits, caps)
    count = len(plan.slices)
    if records is not None:
        return FileAnalysis(None, records, slices_parsed=count, bytes_parsed=sliced)
    whole = _whole(task, caps)
    return msgspec.structs.replace(
        whole, slices_parsed=count, slices_failed=True, bytes_parsed=sliced + len(task.data)
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


def sliced_records(
    language: str,
    data: bytes,
    plan: SlicePlan,
    hits: list[tuple[int, int]],
    caps: ParseTuning,
) -> SlicedRecords | None:
    """The plan's slices (each after its stand-in header, with its trailer) parsed as one
    text, one after the other; None when that text has an error or a statement that runs
    from one slice into the next (then the file is parsed whole). Each slice starts the
    text's line after a whole one (its header's line, or its own first, at column 0), so
    it parses there as it would alone: one parse and one records build a file instead of
    one a slice, each with its fixed cost.

    Sliced records are cached for exactly ``hits``, so only the syntax that touches each
    slice's hits is recorded (every record a lookup inside their span can reach: the scopes,
    regions and tokens that contain or start in it); the rest costs a parse, not records."""
    text, starts, shifts = sliced_text(data, plan)
    hit_shifts = [shifts[owner] for owner in plan.owners]
    if len(text) > caps.max_parse_bytes:
        return SlicedRecords(unparsed(language, "file too large to parse").stored(), hit_shifts)
    spans = [
        (low - shift, high - shift)
        for (low, high), shift in zip(plan.hit_spans(hits), shifts, strict=True)
    ]
    try:
        tree = _parse(language, text)
        root = tree.root_node
        if root.has_error or _crosses(root, starts):
            return None
        records = _build(language, tree, caps, spans)
    except RecursionError:
        records = unparsed(language, "nesting too deep to parse")
    return SlicedRecords(records.stored(), hit_shifts)


def sliced_text(data: bytes, plan: SlicePlan) -> tuple[bytes, list[int], list[int]]:
    """The text ``sliced_records`` parses: each slice after its header and before its
    trailer, one after the other; where each starts in it, and for each what a file offset
    in it loses to land in the text."""
    parts: list[bytes] = []
    starts: list[int] = []
    shifts: list[int] = []
    at = 0
    for piece in plan.slices:
        source = piece.source(data)
        if not source.endswith(b"\n"):
            source += b"\n"  # the file's last line: the next slice starts a line
        starts.append(at)
        shifts.append(piece.start - at - len(piece.header))
        parts.append(source)
        at += len(source)
    return b"".join(parts), starts, shifts


def _crosses(root, starts: list[int]) -> bool:
    """Whether a top-level node of the text runs over the start of a slice."""
    cuts = starts[1:]
    if not cuts:
        return False
    for node in root.children:
        low, high = node.start_byte, node.end_byte
        i = bisect_right(cuts, low)
        if i < len(cuts) and cuts[i] < high:
            return True
    return False


def _parse(language: str, data: bytes):
    from cq.parse.trees import ts_parser

    return ts_parser(language).parse(data)


def _build(
    language: str,
    tree,
    caps: ParseTuning,
    within: list[tuple[int, int]] | None = None,
) -> FileRecords:
    """Records of ``tree``; ``within``: only of the syntax touching these byte spans (the
    hits of Python slices)."""
    if language == "python":
        from cq.classify.python_records import build_python_records

        return build_python_records(tree, within)
    from cq.classify.rust_records import build_rust_records

    return build_rust_records(tree, caps.macro_depth)


def ready(languages: set[str]) -> None:
    """Build the parsers and record queries ``languages`` need now, before a fork: a
    Python query takes ~13 ms to compile, which a forked helper then does not pay again."""
    from cq.parse.trees import ts_parser

    for language in sorted(languages):
        ts_parser(language)
        if language == "python":
            from cq.classify.python_records import prepare
        else:
            from cq.classify.rust_records import prepare
        prepare()


def analyze_batch(tasks: list[FileTask], caps: ParseTuning) -> list[bytes]:
    """Pool entry point: analyses encoded as msgpack (cheap to send back)."""
    encoder = msgspec.msgpack.Encoder()
    return [encoder.encode(analyze_file(task, caps)) for task in tasks]
