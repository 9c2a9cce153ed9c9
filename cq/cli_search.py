"""``cq search``: turn parsed arguments into a ``SearchRequest``, run it, print the report."""

from __future__ import annotations

import argparse
import os
import sys

import msgspec

from cq.errors import UsageError
from cq.model import SearchRequest

_LIMIT_FLAGS = {
    "max_files": "max_files",
    "max_matches_per_file": "max_matches_per_file",
    "max_total_matches": "max_total_matches",
    "timeout": "timeout_seconds",
    "max_depth": "max_depth",
    "max_filesize": "max_file_size_bytes",
}


def request_from_args(args: argparse.Namespace) -> SearchRequest:
    """Profile first, then flags on top; the query from stdin when it is '-'."""
    from cq.confine import is_profile_name
    from cq.profiles import load_profile

    query = args.query
    if query == "-":
        query = sys.stdin.read().rstrip("\r\n")
    if not query.strip():
        raise UsageError("empty query")
    if any("\ud800" <= ch <= "\udfff" for ch in query):  # undecodable bytes, surrogate-escaped
        raise UsageError("the query is not valid UTF-8")
    root = os.path.abspath(args.root or os.environ.get("CQ_ROOT") or ".")
    # A profile file on the command line is relative to the current directory, as shells
    # expect; like every path a request names it must lie inside the root (cq.confine).
    profile = args.profile if is_profile_name(args.profile) else os.path.abspath(args.profile)
    limits = load_profile(profile, root)
    overrides = {
        field: getattr(args, flag)
        for flag, field in _LIMIT_FLAGS.items()
        if getattr(args, flag) is not None
    }
    if overrides:
        limits = msgspec.structs.replace(limits, **overrides)
    return SearchRequest(
        use_cache=not args.no_cache,
        semantic=not args.no_semantic,
        use_index=not args.no_index,
        query=query,
        root=root,
        mode=args.mode,
        lang=args.lang,
        profile=profile,
        limits=limits,
        include=tuple(args.include),
        exclude=tuple(args.exclude),
        in_dir=args.in_dir,
        hidden=args.hidden,
        no_ignore=args.no_ignore,
        ignore_case=args.ignore_case,
        limit=args.limit,
        max_tokens=args.max_tokens,
        focus=args.focus,
        rewrite=args.rewrite,
        context=args.context,
        follow_up=args.follow_up,
        explain=args.explain,
        progress=True,
    )


def output_format(args: argparse.Namespace) -> str:
    fmt = args.format or os.environ.get("CQ_FORMAT") or "md"
    if fmt not in ("md", "json"):
        raise UsageError(f"unknown format {fmt!r} (CQ_FORMAT must be md or json)")
    return fmt


def run_search_command(args: argparse.Namespace) -> int:
    from cq.assemble import fit_answer
    from cq.pipeline import run_search
    from cq.profiles import load_tuning
    from cq.report import render_json, render_markdown

    request = request_from_args(args)
    fmt = output_format(args)
    render = render_json if fmt == "json" else render_markdown
    report = load_tuning(request.profile, request.root).report
    answer = fit_answer(request, run_search(request), render, is_json=fmt == "json", report=report)
    sys.stdout.write(answer.text)
    sys.stdout.flush()
    return 0 if answer.result.summary.total_findings else 1  # found, even if cut to budget
