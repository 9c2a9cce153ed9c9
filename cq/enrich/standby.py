"""The enrichment's standby: a child the one-shot CLI forks first thing for a search
(``cq.cli.dispatch``, with ``cq.prefork.Standby``). While this process reads its command
line, imports the pipeline, runs rg and classifies, the child imports LibCST and the
enrichment's stages; the shown hits to compute from their files are then handed to it whole
(``cq.enrich.share``), and it takes turns at their files with a helper it forks itself,
which inherits what it imported.

Why: LibCST's import costs ~0.14 CPU-s (``python -X importtime -c 'import libcst'``), and a
cold search with a hit for LibCST's scopes paid it on its path, in each of the two processes
computing the hits. Forked before this process's own imports, the child does most of its
import on the core those leave idle (bench/results/2026-11-30-speed13).

Only where it can pay off: a core idle when the search starts (``cq.prefork.idle_core``;
``CQ_STANDBY`` says on or off instead), a process that may fork (``cq.forked.possible``)
and has not imported LibCST (cq's server and ``cq mcp`` import it as they warm up), and a
command line not run before with this cache: a repeat finds its hits in the enrichment
store, so the child's CPU would be spent for nothing. The command lines run are remembered
in the cache (``finish``); the child looks its own up before it imports anything and
leaves if it is there, and this process dismisses it once the search is settled if so, or
if the search reads Rust alone. Handed nothing (no hit for LibCST's scopes, every hit
stored), or not ready in time (``take``), it is dismissed too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cq.prefork import Standby
    from cq.settings import Settings

# The cache's namespace of the command lines run (a hash of their directory and words),
# whose repeats need no standby: a key per command line, an empty value.
_NAMESPACE = "standby-searches"

_standing: Standby | None = None
_command: str | None = None  # the command line a standby was forked for (``finish``)
_dismissed: list[Standby] = []  # killed mid-search, reaped by ``finish``
_insisted = False  # CQ_STANDBY=on: waited for even when starved of a core


def hold(standby: Standby, command: str, *, insisted: bool = False) -> None:
    """Keep the standby forked for ``command`` for this search's enrichment; ``insisted``:
    asked for by ``CQ_STANDBY=on``."""
    global _standing, _command, _insisted
    _standing, _command, _insisted = standby, command, insisted


def settled(settings: Settings) -> None:
    """The search is settled: dismiss the standby when it cannot pay off (above)."""
    if _standing is None or _command is None:
        return
    if settings.scope.lang == "rust" or (settings.scope.use_cache and made_before(_command)):
        take(False)


def take(wanted: bool, wait_ms: int = 0) -> Standby | None:
    """The standby for this search's enrichment if ``wanted`` (a hit may need LibCST's
    scopes) and ready within ``wait_ms`` (``enrich.standby_wait_ms``), once; otherwise it is
    dismissed."""
    global _standing
    standby, _standing = _standing, None
    if standby is None:
        return None
    if not (wanted and standby.wait_ready(wait_ms / 1000, starved=not _insisted)):
        standby.dismiss(wait=False)
        _dismissed.append(standby)
        return None
    return standby


def finish(settings: Settings, *, searched: bool) -> None:
    """After the search: a standby nobody took is dismissed, and a command line that
    ``searched`` (ran to its end) with a standby is remembered, so its repeat has none."""
    take(False)
    while _dismissed:
        _dismissed.pop().dismiss()
    if searched and _command is not None and settings.scope.use_cache:
        from cq.cache.store import open_store

        open_store().put_many(_NAMESPACE, {_command: b""})


def made_before(command: str) -> bool:
    from cq.cache.store import open_store

    store = open_store()
    return store.available and bool(store.get_many(_NAMESPACE, [command]))


def ready(command: str) -> None:  # pragma: no cover - runs in the child
    """In the child: gone at once when ``command`` ran before; else what computing a hit
    imports, and each parser run once."""
    from cq.cache.place import cache_dir
    from cq.cache.schema import FILE_NAME

    if (cache_dir() / FILE_NAME).exists() and made_before(command):  # no cache: a first run
        raise SystemExit(0)
    import cq.enrich.share  # noqa: F401  (the stages, the parsers' modules)
    from cq.parse import SourceFile, cst_metadata, sg_root, ts_tree

    text = "x = 1\n"
    cst_metadata(text)
    warm = SourceFile("standby.py", "python", text.encode(), text, "standby")
    sg_root(warm)  # ast-grep's and tree-sitter's first parse set their parsers up
    ts_tree(warm)


def serve(request: bytes) -> bytes:  # pragma: no cover - runs in the child
    from cq.enrich.share import serve_request

    return serve_request(request)
