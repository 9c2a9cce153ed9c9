"""Run ``cq.cli.main`` in a fork of the test process: the CLI's own code on its own streams,
without starting an interpreter and importing cq for every run.

A ``python -m cq`` subprocess spends most of a small test search starting Python and importing
cq's stages (~0.3 CPU-s of each run on a two-core machine, ~900 runs a suite). Forked from a
process that imported them once, the child starts warm and is otherwise what the subprocess
was: its own pid, environment, working directory, file descriptors 0-2 (pipes the parent
reads, as ``subprocess.run`` does), default signal handlers, and an exit status. Nothing the
child does (caches in memory, threads, signal handlers, chdir) reaches the test process.

Tests about the process itself (signals, a closed stdout, a terminal, a client in another
namespace or under other limits, agent install's registered command) keep ``python -m cq``:
only tests marked ``cli_forked`` come here. A forked client goes to cq's server as
``cq.cli.entry`` does (the server is the real daemon it starts); ``forked_mcp`` forks
``cq mcp`` the same way.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import selectors
import signal
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Imported once, before the first fork: what a search imports lazily on its path.
_WARM = (
    "cq.cli",
    "cq.search.request",
    "cq.search.listing",
    "cq.pipeline",
    "cq.report",
    "cq.assemble",
    "cq.classify",
    "cq.enrich",
    "cq.rank",
    "cq.rewrite",
    "cq.index",
    "tree_sitter",
    "tree_sitter_python",
    "tree_sitter_rust",
    "ast_grep_py",
    "libcst",
    "tantivy",
    # multiprocessing's exit handler, registered at its first import, joins pool workers
    # nobody told to stop: imported here, it is the test process's and a child clears it;
    # first imported in a child, it would run before cq's pool shutdown and wait for ever
    "multiprocessing.util",
    # what every child imports otherwise: the CLI's subcommands (its parser names them all),
    # the stages' lazily imported parts and the modules ``_fresh`` clears
    "cq.cli.agent",
    "cq.cli.cache",
    "cq.cli.completions",
    "cq.cli.embed",
    "cq.cli.index",
    "cq.cli.server",
    "cq.search.options",
    "cq.profiles",
    "cq.rewrite.offline",
    "cq.rewrite.vocabulary",
    "cq.embed.background",
    "cq.semantic.later",
    "cq.semantic.pool",
    "cq.semantic.server",
    "cq.cache.store",
    "cq.parse.trees",
    "cq.classify.pool",
    "cq.server.client",
)
_warmed = False
# ``cq.cli.dispatch.build_parser()``'s parser, built once here (~0.01 CPU-s of each child:
# argparse's gettext lookups for every help string). argparse reads nothing of the
# environment or the terminal until it parses or formats, and parsing changes no parser.
_PARSER: list[object] = []
# The test process's ends of the pipes of forked servers still running (``forked_mcp``): a
# child closes its copies, or a server would never see the end of its input while it lived.
PARENT_ENDS: set[int] = set()


def _warm() -> None:
    global _warmed
    if not _warmed:
        import importlib

        for name in _WARM:
            importlib.import_module(name)
        _warm_pure()
        _warm_search()
        from cq.cli import dispatch

        _PARSER.append(dispatch.build_parser())
        _warmed = True


def run_forked(
    args: list[str],
    cwd: Path | None,
    stdin: bytes | None,
    env: dict[str, str],
    timeout: float,
    preexec: Callable[[], None] | None = None,
) -> tuple[int, bytes, bytes]:
    """``cq ARGS`` in a forked child: (exit status, stdout, stderr). ``preexec`` runs in the
    child first, as ``subprocess``'s ``preexec_fn`` does before the exec (a limit, a dropped
    capability)."""
    _warm()
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 1
        try:
            for theirs, mine in ((in_r, 0), (out_w, 1), (err_w, 2)):
                os.dup2(theirs, mine)
            for fd in (in_r, in_w, out_r, out_w, err_r, err_w):
                os.close(fd)
            for fd in PARENT_ENDS:
                with contextlib.suppress(OSError):
                    os.close(fd)
            if preexec is not None:
                preexec()
            code = _child(args, cwd, env)
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    for fd in (in_r, out_w, err_w):
        os.close(fd)
    return _parent(pid, in_w, out_r, err_r, stdin or b"", timeout)


def _child(args: list[str], cwd: Path | None, env: dict[str, str]) -> int:
    os.environ.clear()
    os.environ.update(env)
    if cwd is not None:
        os.chdir(cwd)
    # the signal handlers Python starts with, and none of the test process's exit handlers;
    # cq's own (its worker pool's, registered when the parent imported it) run at the end
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    atexit._clear()
    _fresh()
    # the streams a ``python -m cq`` started by subprocess.run has (UTF-8 locale)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), "utf-8", "surrogateescape")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), "utf-8", "surrogateescape")
    sys.stderr = io.TextIOWrapper(
        io.FileIO(2, "w", closefd=False), "utf-8", "backslashreplace", line_buffering=True
    )
    from cq.cli import dispatch, main
    from cq.server.client import run_through_server, start_wanted

    # The whole parser, for a search too: its ``search`` subparser is the one it builds alone.
    dispatch.build_parser = lambda **_: _PARSER[0]  # type: ignore[assignment,return-value]

    try:  # as ``cq.cli.entry``: a search goes to the server when one is wanted (CQ_SERVER)
        code = run_through_server(args)
        if code is None:
            code = main(args)
            start_wanted(code)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    return code


# What a search keeps in memory for the life of its process. A test that ran a search in the
# test process itself (``run_search``) filled them there; the child starts as a new process
# would, with none of it. The parent's open cache databases are set aside, not closed: their
# sqlite connections are the parent's (closing them here could checkpoint its log).
_SET_ASIDE: list[object] = []


def _fresh() -> None:
    from cq.cache import store
    from cq.classify import pool
    from cq.embed import background
    from cq.parse import trees
    from cq.rewrite import vocabulary
    from cq.semantic import later
    from cq.semantic import pool as semantic_pool

    _SET_ASIDE.append(dict(store._open_stores))
    store._open_stores.clear()
    for lru in trees._registry.values():
        lru.items.clear()
        lru.hits = lru.misses = 0
    vocabulary._loaded.clear()
    vocabulary._words.clear()
    background._wanted.clear()
    background._running.clear()
    later._LATER.clear()
    semantic_pool._POOL.clear()
    pool._pool = None  # a pool the test process started is not this child's to use
    atexit.register(pool.shutdown_pool)
    atexit.register(_close_stores)
    _clear_caches()


def _clear_caches() -> None:
    """Empty cq's function caches but the pure ones: find_rg and friends read the
    environment. The list of them is the test process's, found again when it has imported
    more modules (a walk over every module's names: ~0.007 CPU-s of each child)."""
    global _clearable_at
    if _clearable_at != len(sys.modules):
        # by identity: a pure function imported by name elsewhere (``namespace`` in
        # cq.cache.digests) is the same function, and clearing it there cleared it
        pure = {id(vars(sys.modules[m]).get(a)) for m, a in _PURE if m in sys.modules}
        _clearable[:] = {
            id(value): value
            for name, module in list(sys.modules.items())
            if name == "cq" or name.startswith("cq.")
            for value in list(vars(module).values())
            if callable(getattr(value, "cache_clear", None)) and id(value) not in pure
        }.values()
        _clearable_at = len(sys.modules)
    for function in _clearable:
        function.cache_clear()


_clearable: list[Any] = []
_clearable_at = 0  # the number of modules imported when ``_clearable`` was found


# Caches of what only cq's own files and the installed packages decide (never the
# environment, the tree or the cache dir): a new process computes the same values, so a child
# keeps what the test process computed (``_warm_pure``). Each search computed them again:
# the cache namespaces' walk over cq's sources and their imports, the tree-sitter queries'
# compilation (~0.05 CPU-s of a small forked search).
_PURE = {
    ("cq.cache.payloads", "namespace"),
    ("cq.cache.payloads", "_source"),
    ("cq.cache.payloads", "_module_files"),
    ("cq.cache.payloads", "_package_files"),
    ("cq.cache.payloads", "_module_imports"),
    ("cq.cache.payloads", "_cq_imports"),
    ("cq.cache.payloads", "_outside_imports"),
    ("cq.cache.payloads", "_source_digest"),
    ("cq.cache.payloads", "_code_stamp"),
    ("cq.cache.dists", "_installed"),
    ("cq.classify.python_records", "_query"),
    ("cq.classify.rust_records", "_query"),
    ("cq.enrich.parse_quality", "_query"),
}


def _warm_pure() -> None:
    from cq.cache import dists, payloads
    from cq.classify import python_records, rust_records
    from cq.enrich import parse_quality

    for path in payloads._package_files():
        module = os.path.relpath(path[: -len(".py")], os.path.dirname(payloads._PACKAGE))
        module = module.replace(os.sep, ".").removesuffix(".__init__")
        payloads._cq_imports(module)  # and its _module_imports, _source
        payloads._outside_imports(module)
        payloads._source_digest(module)
    payloads._code_stamp()
    dists._installed()
    python_records._query()
    rust_records._query()
    for language in ("python", "rust"):
        parse_quality._query(language)


def _warm_search() -> None:
    """Two searches (a name, a question) of a two-line tree in this process, in an
    environment and a cache dir of their own, then everything they left reset as a child
    resets it (``_fresh``). What stays is what only cq's code decides, which a new process
    computes the same and every child computed again (~0.05 of a small search's ~0.12
    CPU-s): msgspec's reading of each Struct's annotations, the cache namespaces of the kinds
    a search opens, the modules a question imports (the index's)."""
    import tempfile

    from cq.cache import store
    from cq.cli import main

    saved, cwd = dict(os.environ), os.getcwd()
    opened = set(store._open_stores)
    with tempfile.TemporaryDirectory(prefix="cq-warm-") as scratch:
        root = Path(scratch, "tree")
        root.mkdir()
        (root / "a.py").write_text("def target():\n    return 1\n")
        os.environ.update(
            CQ_CACHE_DIR=os.path.join(scratch, "cache"),
            XDG_CONFIG_HOME=os.path.join(scratch, "config"),
            CQ_SERVER="0",
            CQ_SEMANTIC="0",
            CQ_LLM_URL="http://127.0.0.1:9/",
        )
        for name in ("CQ_FORMAT", "CQ_ROOT"):
            os.environ.pop(name, None)
        try:
            with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
                for query, output in (("target", "md"), ("where is target returned?", "json")):
                    main(["search", query, "--root", str(root), "--format", output])
        finally:
            os.environ.clear()
            os.environ.update(saved)
            os.chdir(cwd)
            for path in set(store._open_stores) - opened:
                store._open_stores.pop(path).close()
    _clear_caches()


def _close_stores() -> None:
    """Close the databases this child opened, as a process's exit does (its log is then
    folded back and removed: a test may measure the cache dir after cq ends)."""
    from cq.cache import store

    for opened in list(store._open_stores.values()):
        opened.close()


def _parent(
    pid: int, in_w: int, out_r: int, err_r: int, stdin: bytes, timeout: float
) -> tuple[int, bytes, bytes]:
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    sel = selectors.DefaultSelector()
    for fd in (out_r, err_r):
        sel.register(fd, selectors.EVENT_READ)
    pending = memoryview(stdin)
    if pending:
        os.set_blocking(in_w, False)
        sel.register(in_w, selectors.EVENT_WRITE)
    else:
        os.close(in_w)
    deadline = time.monotonic() + timeout
    try:
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise TimeoutError(f"cq {pid} ran past {timeout} s")
            for key, _ in sel.select(min(left, 1.0)):
                fd = key.fd
                if fd == in_w:
                    try:
                        pending = pending[os.write(in_w, pending[: 1 << 16]) :]
                    except BrokenPipeError:
                        pending = pending[:0]
                    if not pending:
                        sel.unregister(in_w)
                        os.close(in_w)
                    continue
                data = os.read(fd, 1 << 16)
                if data:
                    chunks[fd].append(data)
                else:
                    sel.unregister(fd)
                    os.close(fd)
    finally:
        sel.close()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks[out_r]), b"".join(chunks[err_r])
