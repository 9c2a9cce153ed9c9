"""Parse one file and build its records: the unit of work a pool worker runs.

Pure of any cache or pool concern: bytes in, ``FileRecords`` (and tier-2 verdicts for the
hits records cannot decide) out. Safe to run in a spawned worker.
"""

from __future__ import annotations

import msgspec

from cq.classify.node_tier import classify_from_node
from cq.classify.records import FileRecords, StoredRecords, unparsed
from cq.classify.slices import Slice
from cq.model import Classification
from cq.parse.source import searched_bytes

MAX_PARSE_BYTES = 4 * 1024 * 1024
SLICE_FAILED = "slice does not parse"  # the engine then parses the whole file


class FileTask(msgspec.Struct, frozen=True, array_like=True):
    """One file (or one ``slice`` of it) to analyze; ``open_hits`` are (start, end) spans
    that need the node tier."""

    path: str  # absolute
    rel: str
    language: str
    open_hits: list[tuple[int, int]] = []
    slice: Slice | None = None


class FileAnalysis(msgspec.Struct, frozen=True, array_like=True):
    records: StoredRecords
    node_verdicts: list[Classification]


def analyze_file(task: FileTask, data: bytes | None = None) -> FileAnalysis:
    """Records of one file plus node-tier verdicts for ``task.open_hits``."""
    if data is None:
        try:
            with open(task.path, "rb") as fh:
                data = searched_bytes(fh.read())
        except OSError as exc:
            return FileAnalysis(unparsed(task.language, f"unreadable: {exc.strerror}").stored(), [])
    source = data if task.slice is None else task.slice.source(data)
    if len(source) > MAX_PARSE_BYTES:  # a small slice of a huge file is parsed all the same
        return FileAnalysis(unparsed(task.language, "file too large to parse").stored(), [])
    try:
        tree = _parse(task.language, source)
        if task.slice is not None:
            if tree.root_node.has_error:
                return FileAnalysis(unparsed(task.language, SLICE_FAILED).stored(), [])
            return FileAnalysis(_build(task, tree).shifted(task.slice.shift).stored(), [])
        records = _build(task, tree)
    except RecursionError:
        return FileAnalysis(unparsed(task.language, "nesting too deep to parse").stored(), [])
    verdicts = [
        classify_from_node(tree, start, end, records.scope_at(start))
        for start, end in task.open_hits
    ]
    return FileAnalysis(records.stored(), verdicts)


def _parse(language: str, data: bytes):
    from cq.parse.trees import ts_parser

    return ts_parser(language).parse(data)


def _build(task: FileTask, tree) -> FileRecords:
    if task.language == "python":
        from cq.classify.python_records import build_python_records

        return build_python_records(tree)
    from cq.classify.rust_records import build_rust_records

    return build_rust_records(tree)


def analyze_batch(tasks: list[FileTask]) -> list[bytes]:
    """Pool entry point: analyses encoded as msgpack (cheap to send back)."""
    from cq.classify.pool import maybe_inject_fault

    maybe_inject_fault()
    encoder = msgspec.msgpack.Encoder()
    return [encoder.encode(analyze_file(task)) for task in tasks]
