"""The command line read and handed to its subcommand: ``cq`` and ``python -m cq`` start here
(``entry``), ``main`` runs one command line in this process, ``build_parser`` is every
subcommand's parser (what ``cq completions`` and ``tools/gen_reference.py`` walk).

Every failure a user can cause ends in one ``cq: ...`` line on stderr and exit 2
(``cq.search.exit_code``). Exit codes follow rg: 0 results, 1 none, 2 error.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import os
import sys
from collections.abc import Iterator, Sequence


def build_parser(*, search_only: bool = False) -> argparse.ArgumentParser:
    """Every subcommand's parser; with ``search_only``, ``cq search``'s alone (what a search
    reads its command line with: the other subcommands' modules cost ~15 ms to import)."""
    from cq.search import SEARCH_HELP, CommandParser
    from cq.search.options import add_search_options

    parser = CommandParser(prog="cq", description="Code search that understands code.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", parser_class=CommandParser)
    # No abbreviations: rg's --ignore would otherwise be taken for --ignore-case.
    search = sub.add_parser(
        "search", help="search code", description=SEARCH_HELP, allow_abbrev=False
    )
    add_search_options(search)
    if search_only:
        return parser
    from cq.cli.agent import add_agent_parser, add_mcp_parser
    from cq.cli.cache import add_cache_parser
    from cq.cli.embed import add_embed_parser
    from cq.cli.index import add_index_parser
    from cq.cli.server import add_server_parser

    add_agent_parser(sub)
    add_mcp_parser(sub)
    add_cache_parser(sub)
    add_index_parser(sub)
    add_embed_parser(sub)
    add_server_parser(sub)
    sub.add_parser(
        "schema", help="print the JSON Schema of the search result", description=_SCHEMA_HELP
    )
    from cq.cli.completions import add_completions_parser

    add_completions_parser(sub)
    return parser


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The arguments, or a ``UsageError`` naming what cq does not take (``cq.search.left_over``)."""
    from cq.search import left_over

    given = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(search_only=given[:1] == ["search"])
    args, extra = parser.parse_known_args(given)
    return left_over(args, extra, given)


_SCHEMA_HELP = "Print the JSON Schema of what 'cq search --format json' prints."


def _print_schema() -> int:
    """``cq schema``: the JSON Schema of the ``--format json`` report, generated from the
    structs themselves (``cq.report.report_schema``)."""
    import msgspec

    from cq.report import report_schema

    schema = report_schema()
    sys.stdout.write(msgspec.json.format(msgspec.json.encode(schema), indent=2).decode() + "\n")
    return 0


def entry() -> None:
    """``cq`` and ``python -m cq``: run, then exit without the interpreter's last garbage
    collections. Their cost grows with what a search left alive (the semantic stage's syntax
    reading keeps parsed modules), up to seconds of a one-shot search of a large tree after
    its output (figures: bench/results/2026-11-29-figures-from-cq.md); frozen, the objects
    are still freed at exit, only no longer walked for cycles. Once cq has answered, it ends
    without freeing them either (``_end``)."""
    atexit.register(_end)  # the first registered is the last run: after every other
    with _uncollected():
        from cq.server.client import run_through_server, start_wanted

    _fill_closed_stdio()
    if sys.stdout is None:  # started with fd 1 closed (``cq ... >&-``): Python has no stdout
        if sys.stderr is not None:
            sys.stderr.write("cq: standard output is closed: there is nowhere to write to\n")
        raise SystemExit(2)
    code = run_through_server(sys.argv[1:])  # None: this process searches (cq.server)
    if code is None:
        if sys.argv[1:2] == ["search"]:
            _stand_by(sys.argv[1:])
            _settle_imports()
            from cq.cache.handoff import defer_writes

            defer_writes()  # stored as cq exits, by a child once it has gone (cq.cache.handoff)
        code = main()
        start_wanted(code)
    sys.stdout.flush()
    gc.freeze()
    global _answered
    _answered = code
    raise SystemExit(code)


_answered: int | None = None  # the exit code, once ``entry`` has run its command to the end


def _end() -> None:
    """The process's last exit handler: once cq has answered, it leaves without the
    interpreter's teardown, which frees every object a search left (its modules, the files
    read, the vocabulary) one by one: 15-40 ms between a first search's last byte and its
    exit on the stdlib (bench/results/2026-11-30-speed16). What must happen at exit has
    happened by then: the other exit handlers have run (the cache's hand-off, the pools'
    shutdown), threads other than daemons were joined before them, and the output is
    flushed here. A command that did not end normally (an exception, ^C) gets the ordinary
    teardown."""
    if _answered is None:
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed or broken stream: nothing to flush
            stream.flush()
    os._exit(_answered)


def _stand_by(argv: list[str]) -> None:
    """Fork the enrichment's standby (``cq.enrich.standby``) before anything else is
    imported: its own imports then run beside this process's, on a core that is idle
    (``CQ_STANDBY``: auto, on, off; a bad value is reported by the search, which counts it
    as auto here). Only ``cq.prefork`` is imported here; the child imports the rest, and this
    process hands the standby to the enrichment once it has forked it."""
    from cq import forked, prefork

    wanted = os.environ.get("CQ_STANDBY", "").strip().lower()
    if wanted == "off" or "libcst" in sys.modules or not forked.possible():
        return
    if wanted != "on" and not prefork.idle_core():
        return
    import hashlib
    from functools import partial

    try:  # the command line as run, its directory and its words (hashed: no query kept)
        words = "\0".join([os.getcwd(), *argv]).encode("utf-8", "surrogateescape")
    except OSError:  # the current directory was removed: the search says so
        return
    command = hashlib.blake2b(words, digest_size=16).hexdigest()
    # asked for (on): not lowered, and waited for however slow a busy machine makes it
    nice = 0 if wanted == "on" else prefork.Standby.NICE
    child = prefork.Standby.start(partial(_standby_ready, command), _standby_serve, nice=nice)
    if child is not None:
        from cq.enrich.standby import hold

        hold(child, command, insisted=wanted == "on")


def _standby_ready(command: str) -> None:  # pragma: no cover - runs in the standby
    from cq.enrich.standby import ready

    ready(command)


def _standby_serve(request: bytes) -> bytes:  # pragma: no cover - runs in the standby
    from cq.enrich.standby import serve

    return serve(request)


def _settle_imports() -> None:
    """Import the search path now and exempt what it made from garbage collection: a
    one-shot search keeps its modules for life, and each full collection during the search
    walked them again (LibCST's import and a vocabulary's build trigger two or three: 52-64
    ms of a first 'TextIOWrapper' or 'getLoger' search on the stdlib, 18-26 ms once frozen).
    Only here: a long-lived process (``cq mcp``, cq's server) freezes what its warm-up made
    itself (``cq.server.warm``), never a search's leftovers, which it must be able to free."""
    with _uncollected():
        import cq.pipeline
        import cq.search.request  # noqa: F401

        gc.freeze()


@contextlib.contextmanager
def _uncollected() -> Iterator[None]:
    """No garbage collection while modules are imported: what an import makes lives as long
    as cq, and the collections its allocations set off walked it for nothing (the search
    path's imports: median 117 -> 111 ms over 25 runs, ``python -c 'import
    cq.server.client, cq.pipeline, cq.search.request'`` with and without ``gc.disable()``)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _fill_closed_stdio() -> None:
    """A closed stdin or stderr (``cq ... <&-``, ``2>&-``) is ``/dev/null`` underneath: the
    next file cq opened would take its number, which rg and every child inherit as their
    stdin or stderr. A closed stderr also gets a stream: Python starts with none (every
    ``print(file=sys.stderr)`` would go to stdout, every ``sys.stderr.isatty()`` fail). A
    closed stdin keeps none, so ``cq search -`` still says there is no stdin."""
    for fd in (0, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:  # fd 0 closed too: /dev/null took that number first
                os.dup2(null, fd)
                os.close(null)
    if sys.stderr is None:
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (``cq.search.exit_code``: a failure is one line)."""
    from cq.search import exit_code

    return exit_code(lambda: _run(argv))


def _run(argv: Sequence[str] | None) -> int:
    args = parse(argv)
    if args.version:
        from cq import __version__

        print(f"cq {__version__}")
        return 0
    if args.command == "search":
        from cq.search import run_search_args

        return run_search_args(args)
    if args.command == "mcp":
        from cq.env import check_environment

        check_environment()  # a bad CQ_* value is reported by name before any work
    if args.command == "agent":
        from cq.cli.agent import run_agent_command

        return run_agent_command(args)
    if args.command == "mcp":
        from cq.cli.agent import run_mcp_command

        return run_mcp_command(args)
    if args.command == "cache":
        from cq.cli.cache import run_cache_command

        return run_cache_command(args)
    if args.command == "index":
        from cq.cli.index import run_index_command

        return run_index_command(args)
    if args.command == "embed":
        from cq.cli.embed import run_embed_command

        return run_embed_command(args)
    if args.command == "server":
        from cq.cli.server import run_server_command

        return run_server_command(args)
    if args.command == "schema":
        return _print_schema()
    if args.command == "completions":
        from cq.cli.completions import print_completions

        return print_completions(args, build_parser())
    build_parser().print_help()
    return 2
