"""The repository's vocabulary: every defined name and the files defining it.

One rg run extracts ``def``/``class`` (Python) and ``fn``/``struct``/``enum``/``trait``/... (Rust)
names plus module-level UPPER_CASE constants. The three definitions are one alternation whose
groups are numbered 1 to 3, replaced by ``${1}${2}${3}`` (the groups that did not take part are
empty): with one ``-e`` each and ``$1``, rg numbers the groups across the joined patterns, so
every Rust name and constant came out empty and Rust trees had no vocabulary at all. The
result is cached in the cq store, keyed by a fingerprint of the file list (paths, sizes,
mtimes), so a warm search pays one ``rg --files``: the search's listing (``cq.parse.Listing``,
shared with the index and the semantic stage) when no --include/--exclude narrows it; a
long-lived process keeps the last one it loaded under the same key.
"""

from __future__ import annotations

import gc
import hashlib
import os
import re
import subprocess
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import msgspec

from cq.cache.digests import stat_fingerprint
from cq.cache.payloads import PayloadCache
from cq.model import Scope
from cq.parse import Listing, list_tree, python_syntax, rust_syntax
from cq.parse.listing import PYTHON_RUST
from cq.prefork import held_still
from cq.rewrite.names_by_word import NameWords
from cq.tools import find_rg, rg_env


def _definitions(name: str, constant: str) -> tuple[str, ...]:
    """The three definition patterns (Python, Rust, module constants), each with one group:
    ``name`` or, for a constant, ``constant`` (rg's syntax, which Python's ``re`` reads too)."""
    return (
        rf"^[ \t]*(?:async[ \t]+)?(?:{'|'.join(python_syntax.DEFINITION_KEYWORDS)})"
        rf"[ \t]+({name})",
        r"^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?(?:(?:async|unsafe|const|extern)[ \t]+)*"
        rf"(?:{'|'.join(rust_syntax.ITEM_KEYWORDS)})[ \t]+({name})",
        rf"^({constant})[ \t]*(?::[^=\n]*)?=[^=]",
    )


_DEFINITIONS = _definitions("[A-Za-z_][A-Za-z0-9_]*", "[A-Z][A-Z0-9_]{2,}")
_EXTRACT = "|".join(f"(?:{pattern})" for pattern in _DEFINITIONS)
_MAX_NAMES = 200_000


class Vocabulary(msgspec.Struct, frozen=True):
    """Defined names -> relative paths of the files defining them; all files; a content hash.
    Which names hold a word is asked of ``name_words(vocabulary)``."""

    names: dict[str, tuple[str, ...]]
    files: tuple[str, ...]
    digest: str

    def defines(self, name: str) -> bool:
        return name in self.names


# The last vocabularies this process loaded, one per tree (its root and the search's globs;
# each knows its listing's stat fingerprint, ``digest``): a long-lived cq (the server's search
# processes) asking again for an unchanged tree skips reading and decoding it (``python -m
# bench.cold_questions``; figures: bench/results/2026-11-29-figures-from-cq.md), and so do
# their lookups by word (``name_words``). Three trees: a warm question on moto after searches
# on two other roots had its rewrite take 94-100 ms instead of 30 with one kept (decoding
# moto's 22,214 names again, 45 ms, and its words' lookups, 34 ms: bench.background's busy
# warm question, bench/results/2026-12-01-speed17). A vocabulary holds 0.6-54 MB (sqlfluff,
# moto 12, the stdlib with its site-packages); a search process past its memory bound
# retires (cq.server.memory).
_KEPT = 3
_V = TypeVar("_V")
_loaded: OrderedDict[str, Vocabulary] = OrderedDict()


def vocabulary_for(
    scope: Scope, listing: Listing | None = None, scanned: Callable[[], None] | None = None
) -> Vocabulary:
    """The vocabulary of the search's tree under its --include/--exclude globs; ``scanned``
    is called once its rg run is over (none when it was cached)."""
    globs = (*scope.include, *("!" + g for g in scope.exclude))
    return load_vocabulary(
        Path(scope.root),
        globs=globs,
        use_cache=scope.use_cache,
        listing=listing,
        timeout=scope.limits.timeout_seconds,
        scanned=scanned,
    )


def definition_site(text: str, name: str) -> tuple[int, int, str] | None:
    """Where a file's ``text`` defines ``name`` as the extraction reads definitions, the
    outermost definition first (a module's ``def getLogger`` before ``Manager.getLogger``),
    then the first: (1-based line, 0-based column of the name, the keyword before it, ``=``
    for a module constant); None when it does not."""
    escaped = re.escape(name)
    found = [
        match
        for pattern in _definitions(rf"{escaped}\b", rf"{escaped}\b")
        for match in re.finditer(pattern, text, re.MULTILINE)
    ]
    if not found:
        return None
    best = min(found, key=lambda m: (m.start(1) - m.start(), m.start(1)))
    line_start = text.rfind("\n", 0, best.start(1)) + 1
    before = text[best.start() : best.start(1)].split()
    return (
        text.count("\n", 0, best.start(1)) + 1,
        best.start(1) - line_start,
        (before[-1] if before else "="),
    )


def load_vocabulary(
    root: Path,
    *,
    globs: tuple[str, ...] = (),
    use_cache: bool = True,
    listing: Listing | None = None,
    timeout: float = 30.0,
    scanned: Callable[[], None] | None = None,
) -> Vocabulary:
    """The vocabulary of ``root`` (Python and Rust files), from the cache when unchanged.

    ``globs`` are rg ``--glob`` filters (the search's ``--include``/``--exclude``), so names
    from excluded trees (vendored or installed packages) do not steer the rewrite; without
    them the files are the search's ``listing`` when it has one. A scan that takes more than
    ``timeout`` seconds (the search's --timeout) is stopped: the rewrite goes on with no
    vocabulary, and nothing is cached, so the next search scans again.
    """
    filters = [arg for glob in globs for arg in ("--glob", glob)]
    files = _list_files(root, filters, listing)
    fingerprint = _fingerprint(root, files)
    key = f"{root}:{fingerprint}"  # the root's real path (cq.settings.settle)
    store = PayloadCache(
        "rewrite-vocabulary", Vocabulary, ("cq.rewrite.vocabulary",), enabled=use_cache
    )
    slot = f"{store.namespace}:{root}:{chr(0).join(globs)}"  # the tree as this search filters it
    held = _loaded.get(slot) if use_cache else None
    if held is not None and held.digest == fingerprint:
        _loaded.move_to_end(slot)
        return held
    cached = store.get_many([key]).get(key)
    if cached is not None:
        _remember(slot, cached)
        return cached
    vocabulary = _without_collections(
        lambda: _extract(root, files, fingerprint, filters, timeout, scanned)
    )
    if vocabulary is None:
        return Vocabulary(names={}, files=files, digest=fingerprint)
    store.add(key, vocabulary)
    store.flush()
    _remember(slot, vocabulary)
    return vocabulary


def _without_collections(build: Callable[[], Vocabulary | None]) -> Vocabulary | None:
    """``build()`` with the garbage collector paused: a vocabulary's objects (a name, its
    files, a tuple of them, for each of the stdlib's 44,687 names) all live on and hold no
    cycle, and building them set off a full collection (85 against 93-101 CPU-ms of
    ``_extract`` on the stdlib: bench/results/2026-11-30-speed12)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return build()
    finally:
        if paused:
            gc.enable()


def _remember(slot: str, vocabulary: Vocabulary) -> None:
    """Keep ``vocabulary`` for its tree: an edited tree's earlier one goes, with its lookups
    by word, instead of taking the place of another tree's."""
    earlier = _loaded.get(slot)
    if earlier is not None and earlier.digest != vocabulary.digest:
        _words.pop(earlier.digest, None)
    _kept(_loaded, slot, vocabulary)


def _kept(memory: OrderedDict[str, _V], key: str, value: _V) -> _V:
    """``value`` kept under ``key`` as the latest of ``_KEPT`` entries (the oldest dropped)."""
    memory[key] = value
    memory.move_to_end(key)
    while len(memory) > _KEPT:
        memory.popitem(last=False)
    return value


def _list_files(root: Path, filters: list[str], listing: Listing | None) -> tuple[str, ...]:
    try:
        if listing is not None and not filters:
            files = listing.files()
        else:
            files = list_tree(root, tuple(filters))
    except OSError:
        return ()
    # A name that is not UTF-8 kept as the search reads it (os.fsdecode): the file opens
    # and is stat'ed for the fingerprint; such a vocabulary is not stored (msgpack cannot
    # write it) but built again, as the digest memory reads such a file again.
    return tuple(files)


def _fingerprint(root: Path, files: tuple[str, ...]) -> str:
    digest = hashlib.blake2b(digest_size=16)
    stat_fingerprint(digest, str(root), files)
    return digest.hexdigest()


def _extract(
    root: Path,
    files: tuple[str, ...],
    fingerprint: str,
    filters: list[str],
    timeout: float,
    scanned: Callable[[], None] | None = None,
) -> Vocabulary | None:
    """The vocabulary rg finds; None when the scan ran out of ``timeout``."""
    argv = ["--heading", "--with-filename", "--null", "--no-line-number", "--only-matching"]
    argv += ["--replace", "${1}${2}${3}", *PYTHON_RUST, *filters, "-e", _EXTRACT]
    found = _rg(root, argv, timeout)
    if scanned is not None:
        scanned()
    if found is None:
        return None
    names: dict[str, list[str]] = {}
    # Files in path order: rg's threads write them in any order, and a tree with more than
    # _MAX_NAMES definitions kept whichever came first (84 names of the stdlib with its
    # site-packages differed between two runs).
    budget = _MAX_NAMES
    for path, defined in sorted(_by_file(found)):
        defined = defined[:budget]
        budget -= len(defined)
        rel = _relative(path)
        for name in dict.fromkeys(defined):  # a file once under each name it defines
            if name.isidentifier():
                names.setdefault(name, []).append(rel)
        if budget <= 0:
            break
    # each name's files came in path order (a "./" before every path sorts as without it)
    # the names sorted alone, not their items: ~27 against ~34 ms for the stdlib's 44,687
    ordered = {n: tuple(names[n]) for n in sorted(names)}
    return Vocabulary(names=ordered, files=files, digest=fingerprint)


def _by_file(output: str) -> Iterator[tuple[str, list[str]]]:
    """(path, names) for each file of rg's ``--heading --null`` output: the path, NUL, one
    name a line, and a blank line before the next path. A path may hold newlines, even a
    blank line, but no NUL; a name holds neither and is never empty, so a file's names end
    at the first blank line after its NUL (one pass of C string methods, where a regex
    match a name cost ~0.1 s on the stdlib's 60,000 definitions; the whole reading, rg's
    output to names, takes ~0.07 s now: bench/results/2026-11-30-speed12)."""
    chunks = output.split("\0")
    path = chunks[0]
    for chunk in chunks[1:]:
        body, _, path_after = chunk.partition("\n\n")
        yield path, [name for name in body.split("\n") if name]
        path = path_after


_words: OrderedDict[str, NameWords] = OrderedDict()  # the last vocabularies', by digest


def name_words(vocabulary: Vocabulary) -> NameWords:
    """The lookups by word over ``vocabulary``'s names, one per vocabulary a process holds:
    what it found stays found for the next search of a long-lived process."""
    found = _words.get(vocabulary.digest)
    if found is None:
        found = NameWords(list(vocabulary.names))
    return _kept(_words, vocabulary.digest, found)


def _rg(root: Path, args: list[str], timeout: float = 30.0) -> str | None:
    """rg's output; None when it ran out of ``timeout`` seconds."""
    argv = [find_rg(), "--no-config", "--no-messages", *args, "--", "."]
    try:
        with held_still():  # rg keeps every core busy: a standby readying waits (cq.prefork)
            proc = subprocess.run(
                argv,
                cwd=root,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout,
                env=rg_env(),
            )
    except subprocess.TimeoutExpired:
        return None
    except OSError:
        return ""
    return os.fsdecode(proc.stdout)  # file names as the search reads them; names: identifiers


def _relative(path: str) -> str:
    path = path.replace(os.sep, "/")
    return path[2:] if path.startswith("./") else path
