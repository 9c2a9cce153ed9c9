"""What a long-lived cq process does once so that its searches start warm.

Shared by the server's search processes; ``cq mcp``'s search process does the same steps
(``cq.agent.search_worker``) and can call ``warm_process`` instead. The search path's modules
are imported up front, the Pyrefly pool is told the process lives across searches (its servers
stay up, one per recently searched root, ``cq.semantic.pool.MAX_SERVERS`` at most), and the
heavy parsers are imported in a background thread that stops once a search starts (a search
imports what it needs itself; a second importing thread only slowed the first search down).
What survives between searches: the imports, the classifier's worker pool, the open cache
store and digest memory, the repository indexes opened, the Pyrefly servers.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import threading

_HEAVY_MODULES = ("ast_grep_py", "tree_sitter_python", "tree_sitter_rust", "libcst")


def warm_process(searching: threading.Event) -> None:
    """Import the search path and keep Pyrefly warm; heavy parsers load until ``searching``."""
    threading.Thread(target=_warm_up, args=(searching,), name="cq-warm", daemon=True).start()
    import cq.cli_search
    import cq.pipeline
    import cq.report  # noqa: F401
    from cq.cli import build_parser
    from cq.semantic import keep_servers_warm

    build_parser()  # imports the option table and every subcommand's parser
    keep_servers_warm()
    gc.freeze()  # what start-up made is kept for life: later collections need not walk it


def _warm_up(searching: threading.Event) -> None:
    for name in _HEAVY_MODULES:  # a missing one is reported by the stage that needs it
        if searching.is_set():
            return
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
