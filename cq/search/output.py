"""The report onto standard output: the one place a search writes it."""

from __future__ import annotations

import sys

from cq.errors import OutputError


def write_out(text: str) -> None:
    """``text`` on stdout, flushed: a stream that refuses it (a full disk, an I/O error) is
    said in one line (``OutputError``); a reader gone is left to ``cq.search.exit_code``
    (``BrokenPipeError``: exit 0, as rg)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(
            f"cannot write the report to standard output: {exc.strerror or exc}"
        ) from None
