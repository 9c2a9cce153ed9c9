"""``cq search``: turn parsed arguments into a ``SearchRequest``, run it, print the report."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

import msgspec

from cq.errors import UsageError
from cq.model import SearchRequest
from cq.model.options import LIMIT_FLAGS, NOT_IN_REQUEST, SEARCH_OPTIONS

if TYPE_CHECKING:
    from cq.settings import Settings


def request_from_args(args: argparse.Namespace, *, query_needed: bool = True) -> SearchRequest:
    """``search_from_args``' request."""
    return search_from_args(args, query_needed=query_needed)[0]


def search_from_args(
    args: argparse.Namespace, *, query_needed: bool = True
) -> tuple[SearchRequest, Settings]:
    """The request, settled with its ``Settings`` (``cq.settings.settle``: the root confined
    once, then the profile parsed once against it, the limit flags on the profile's limits).
    The query from stdin when it is '-'. Every option of ``cq.model.options`` the CLI spells
    is read by its request field's name. ``--files`` needs no query (``query_needed``): its
    request's is empty."""
    from cq.confine import is_profile_name
    from cq.settings import settle

    query = args.query if query_needed else ""
    if query is None:
        raise UsageError("the following arguments are required: QUERY (see 'cq search --help')")
    if query == "-":
        query = _read_stdin().rstrip("\r\n")
    # an empty path is most often an unset shell variable ("$DIR"): rg refuses it, and cq
    # would have searched the current directory instead (the whole root for --in; an empty
    # --exclude leaves every file out, and the report said nothing held the query; an empty
    # --context names nothing "it" could be)
    excluded = "" if "" in (args.exclude or ()) else None
    named = ((args.root, "--root"), (args.path, "PATH"), (args.in_dir, "--in"))
    for given, name in (*named, (excluded, "--exclude"), (args.context, "--context")):
        if given == "":
            raise UsageError(f"{name} is empty (an unset variable?)")
    named_root = args.root or os.environ.get("CQ_ROOT")
    root, in_dir = os.path.abspath(named_root or "."), args.in_dir
    if args.path is not None:
        root, in_dir = searched_path(args.path, root, named_root=bool(named_root), in_dir=in_dir)
    # A profile file on the command line is relative to the current directory, as shells
    # expect; like every path a request names it must lie inside the root (cq.confine).
    profile = args.profile if is_profile_name(args.profile) else os.path.abspath(args.profile)
    overrides = {
        limit.field: getattr(args, limit.field)
        for limit in LIMIT_FLAGS
        if getattr(args, limit.field) is not None
    }
    for field in ("max_files", "max_total_matches"):  # a cap given here binds questions too
        if field in overrides:
            overrides[f"question_{field}"] = overrides[field]
    fields = {
        o.name: getattr(args, o.name)
        for o in SEARCH_OPTIONS
        if o.cli and o.name not in NOT_IN_REQUEST
    }
    fields |= _context_widths(args)
    fields |= {
        "query": query,
        "root": root,
        "in_dir": in_dir,
        "profile": profile,
        "progress": True,
    }
    return settle(msgspec.convert(fields, SearchRequest), overrides)


def searched_path(
    path: str, root: str, *, named_root: bool, in_dir: str | None
) -> tuple[str, str | None]:
    """The root and subtree of rg's ``rg PATTERN PATH``: a PATH inside the root is the part
    searched (``--in``); one outside it is the root (a file: its directory, the file the part),
    unless ``--root`` or ``$CQ_ROOT`` named another. Relative to the current directory, as
    shells expect. A PATH that does not exist is most often the second word of an unquoted
    question."""
    from shlex import quote

    from cq.confine import inside

    if in_dir:
        raise UsageError(f"name the part to search once: {path!r} or --in {in_dir!r}")
    target = os.path.abspath(path)
    if not os.path.exists(target):
        hint = "quote a query with spaces (see 'cq search --help')"
        under = os.path.join(root, path)
        if named_root and inside(os.path.realpath(root), under) and os.path.exists(under):
            spelt = f"--in={quote(path)}" if path.startswith("-") else f"--in {quote(path)}"
            hint = f"PATH is relative to the current directory; the root's is {spelt}"
        raise UsageError(f"unexpected argument {path!r}: no such file or directory; {hint}")
    if not (os.path.isdir(target) or os.path.isfile(target)):  # a FIFO would block rg
        raise UsageError(f"{path!r} is not a directory or a regular file")
    real_root, real = os.path.realpath(root), os.path.realpath(target)
    if inside(real_root, target):
        part = os.path.relpath(real, real_root)
        return root, None if part == "." else part
    if named_root:
        raise UsageError(f"{path!r} is outside the root {root}")
    if os.path.isdir(target):
        return target, None
    # a link's own directory holds only the link: the root is where the file is
    return os.path.dirname(real), os.path.basename(real)


def _context_widths(args: argparse.Namespace) -> dict[str, int]:
    """-A and -B as given, else -C's width (rg's rule)."""
    around = args.context_lines
    return {
        "before_context": around if args.before_context is None else args.before_context,
        "after_context": around if args.after_context is None else args.after_context,
    }


def _read_stdin() -> str:
    """The query from stdin, read no further than the size limit: a stream that never ends
    (``yes | cq search -``) or a huge file is refused once past it, not read to its end.
    Decoded as the text stream would (UTF-8, undecodable bytes kept for the UTF-8 check,
    universal newlines)."""
    from cq.model.request import MAX_QUERY_BYTES

    if sys.stdin is None:  # started with stdin closed
        raise UsageError("the query is '-' but there is no stdin to read it from")
    data = sys.stdin.buffer.read(MAX_QUERY_BYTES + 1)
    if len(data) > MAX_QUERY_BYTES:
        raise UsageError(
            f"the query on stdin is more than the {MAX_QUERY_BYTES:,} bytes searched: "
            "keep the issue text and the traceback"
        )
    text = data.decode("utf-8", errors="surrogateescape")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def output_format(args: argparse.Namespace) -> str:
    fmt = args.format or os.environ.get("CQ_FORMAT") or "md"
    if fmt not in ("md", "json"):
        raise UsageError(f"unknown format {fmt!r} (CQ_FORMAT must be md or json)")
    return fmt


def run_search_command(args: argparse.Namespace) -> int:
    from functools import partial

    from cq.assemble import fit_answer
    from cq.enrich import standby
    from cq.pipeline import run_search
    from cq.report import colour_markdown, render_json, render_markdown
    from cq.search.output import write_out

    request, settings = search_from_args(args)
    standby.settled(settings)  # the one-shot CLI's (cq.cli.dispatch), if it forked one
    fmt = output_format(args)
    render = render_json if fmt == "json" else partial(render_markdown, verbose=request.explain)
    report = settings.tuning.report
    try:
        result = run_search(request, settings=settings)
    except BaseException:
        standby.finish(settings, searched=False)
        raise
    standby.finish(settings, searched=True)
    answer = fit_answer(settings.echo, result, render, is_json=fmt == "json", report=report)
    text = colour_markdown(answer.text) if fmt == "md" and colour_wanted(args) else answer.text
    write_out(text)
    return 0 if answer.result.summary.total_findings else 1  # found, even if cut to budget


def colour_wanted(args: argparse.Namespace) -> bool:
    """``--color``: ``auto`` colours only a terminal, and never when ``NO_COLOR`` is set and not
    empty (no-color.org) or the terminal is ``dumb``; the flag's ``always`` and ``never`` win
    over both."""
    if args.color != "auto":
        return args.color == "always"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return sys.stdout.isatty()
