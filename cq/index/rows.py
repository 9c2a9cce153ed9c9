"""Document rows for many files, in-process or (for a large first build) in a process pool."""

from __future__ import annotations

from collections.abc import Iterator

from cq.index.documents import DocRow, file_rows
from cq.index.files import language_of_path


def rows_for_files(files: dict[str, bytes]) -> Iterator[list[DocRow]]:
    """Each file's rows, in sorted path order."""
    for path in sorted(files):
        yield file_rows(path, files[path], language_of_path(path))
