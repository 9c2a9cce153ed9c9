"""``cq search -l``, ``-c`` and ``--files``: file names instead of the report, one per line,
as rg prints them (``-c``: ``PATH:N``), for a pipe or an editor's quickfix list."""

from __future__ import annotations

import argparse
import os

from cq.errors import UsageError
from cq.model import SearchRequest

_FLAG = {"paths": "-l/--files-with-matches", "counts": "-c/--count", "files": "--files"}
_PRINTS = {"paths": "file names", "counts": "file names with counts", "files": "file names"}


def run_listing(args: argparse.Namespace) -> int:
    """Print the files; exit 0 when there are some, 1 when none (as rg)."""
    from cq.report import colour_path
    from cq.search.output import write_out
    from cq.search.request import colour_wanted, request_from_args, search_from_args
    from cq.terminal import visible

    flag = _FLAG[args.listing]
    if args.format == "json":  # $CQ_FORMAT is a report's default: these print no report
        printed = _PRINTS[args.listing]
        raise UsageError(f"{flag} prints {printed}, not --format json: leave one out")
    if args.listing == "files":
        lines = _searched(request_from_args(_files_path(args), query_needed=False))
    else:
        from cq.pipeline import run_search

        request, settings = search_from_args(args)
        result = run_search(request, settings=settings)
        counted = args.listing == "counts"
        files = result.files or ()
        lines = [(fc.file, f":{fc.count}" if counted else "") for fc in files]
    colour = colour_wanted(args)
    out = []
    for path, tail in lines:
        shown = colour_path(visible(path)) if colour else visible(path)
        out.append(f"{shown}{tail}\n")
    write_out("".join(out))
    return 0 if lines else 1


def _files_path(args: argparse.Namespace) -> argparse.Namespace:
    """``rg --files PATH``: with no query to take, the word argparse read as one is the PATH."""
    if args.path is not None:
        raise UsageError("--files takes one PATH: name more with --include GLOB")
    if args.query is not None and not os.path.exists(args.query):
        raise UsageError(
            f"--files takes no QUERY, only a PATH: {args.query!r}: no such file or directory"
        )
    return argparse.Namespace(**{**vars(args), "query": None, "path": args.query})


def _searched(request: SearchRequest) -> list[tuple[str, str]]:
    """The files rg would search, of a settled (confined) request."""
    from cq.candidates import searched_files
    from cq.model import Scope

    return [(path, "") for path in searched_files(Scope.of(request))]
