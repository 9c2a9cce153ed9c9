"""Typed payloads in the store, under a namespace derived from the code that shapes them.

Each kind of payload (classification records, symbol tables, enrichments, ...) names the
modules that build it. Its namespace is ``<name>-<hash>``, the hash covering the source of
those modules and of every cq module they import, found by reading their import statements
(so a helper module a builder starts to use is covered without being listed anywhere), the
installed versions of the third-party packages they import, and the Python version. A changed
builder therefore never serves payloads the old code built, with no version to bump by hand;
entries of old namespaces age out of the store's LRU.

``PayloadCache`` reads and writes one kind: lookups in one query, writes batched (``add``,
then ``flush`` in one transaction). A payload that fails its checksum or does not decode
counts as ``corrupt`` and is a miss (the caller rebuilds it, and the fresh one overwrites
it). A disabled cache (``--no-cache``) finds nothing and stores nothing.

Working a namespace out reads the sources of its builders' import closure; the store keeps
the namespaces it has named under a stamp of cq's files (path, size, modification time) and
the environment, so a later process with the same code names its caches in one lookup.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sys
from collections.abc import Iterable
from functools import cache
from typing import Generic, TypeVar

import msgspec

from cq.cache.dists import dist_version, installed_versions
from cq.cache.store import open_store

T = TypeVar("T")

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the cq package
# Matched after a newline (the source is read with one in front) rather than at a MULTILINE
# ``^``: a literal first character lets ``re`` skip to the next line instead of trying every
# position (the same closures and third-party sets for all of cq's modules either way).
_IMPORT = re.compile(
    r"\n[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+(?:\(([^)]*)\)|([^\n#;]+))"
    r"|import[ \t]+([^\n#;]+))"
)


class PayloadCache(Generic[T]):
    """One kind of payload: ``T`` values by string key (usually a content hash)."""

    def __init__(
        self,
        name: str,
        payload: type[T],
        builders: tuple[str, ...],
        *,
        enabled: bool = True,
        settings: object = None,
    ) -> None:
        """``settings`` (any msgspec-encodable value: the tuned caps that shape the payload)
        joins the code in the namespace."""
        self.namespace = namespace(name, builders, recorded=enabled)
        if settings is not None:
            tuned = hashlib.blake2b(msgspec.msgpack.encode(settings), digest_size=4).hexdigest()
            self.namespace += f"-{tuned}"
        self.store = open_store() if enabled else None
        self.decoder = msgspec.msgpack.Decoder(payload)
        self.encoder = msgspec.msgpack.Encoder()
        self.pending: dict[str, bytes] = {}
        self.pending_bytes = 0
        self.corrupt = 0

    def get_many(self, keys: Iterable[str]) -> dict[str, T]:
        """The stored payloads among ``keys``, those queued by ``add`` included (a search
        that meets the same content twice finds the first result before it is written)."""
        if self.store is None:
            return {}
        found: dict[str, T] = {}
        wanted = list(keys)
        for key in wanted:
            blob = self.pending.get(key)
            if blob is not None:
                found[key] = self.decoder.decode(blob)
        missing = [key for key in wanted if key not in found]
        damaged: list[str] = []
        for key, blob in self.store.get_many(self.namespace, missing, damaged).items():
            try:
                found[key] = self.decoder.decode(blob)
            except (msgspec.DecodeError, msgspec.ValidationError):
                self.corrupt += 1
        self.corrupt += len(damaged)
        return found

    def add(self, key: str, value: T) -> None:
        """Queue a payload for the next ``flush``; one naming a file that is not UTF-8 (its
        bytes as lone surrogates, which msgpack will not write) is not stored: built again."""
        if self.store is not None:
            try:
                blob = self.encoder.encode(value)
            except UnicodeEncodeError:
                return
            self.pending[key] = blob
            self.pending_bytes += len(blob)

    def flush(self) -> None:
        """Write the queued payloads in one transaction."""
        if self.store is not None and self.pending:
            self.store.put_many(self.namespace, self.pending)
        self.pending, self.pending_bytes = {}, 0


@cache
def namespace(name: str, builders: tuple[str, ...], *, recorded: bool = True) -> str:
    """``<name>-<hash>`` of the builders' code (with what it imports) and its environment:
    as the store last recorded it for this code and environment (``_recorded``), or worked
    out (``derived_namespace``) and recorded; ``recorded`` False (a cache that is off) works
    it out without the store. Working it out reads and hashes the sources of the builders'
    import closure: 28 ms of a cold one-shot 'get' on the stdlib and 47 ms of a question,
    for the namespaces a search asks for (bench/results/2026-11-30-speed16)."""
    if not recorded:
        return derived_namespace(name, builders)
    key = f"{name}\0{','.join(builders)}"
    known = _recorded()
    found = known.get(key)
    if found is None:
        found = known[key] = derived_namespace(name, builders)
        _record(known)
    return found


# The namespaces of this code and environment as the store holds them (``_recorded``), under
# ``_code_stamp``: one lookup per process instead of reading and hashing the closures.
_NAMESPACES = "payload-namespaces"
# This process's, once read. No lock: two threads naming a cache at once at worst both read
# or both record (the same values), and a lock held by a thread as the process forks would
# stay held in the child.
_loaded: list[dict[str, str]] = []


def _recorded() -> dict[str, str]:
    """The namespaces the store holds for this code and environment (none when it holds
    none, or an entry that does not decode), by name and builders; read once a process."""
    if not _loaded:
        found: dict[str, str] = {}
        store = open_store()
        if store.available:
            blob = store.get_many(_NAMESPACES, [_code_stamp()]).get(_code_stamp())
            if blob is not None:
                with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
                    found = msgspec.msgpack.decode(blob, type=dict[str, str])
        _loaded.append(found)
    return _loaded[0]


def _record(known: dict[str, str]) -> None:
    """Store ``known`` (every namespace this process has named) under the code's stamp."""
    store = open_store()
    if store.available:
        store.put_many(_NAMESPACES, {_code_stamp(): msgspec.msgpack.encode(dict(known))})


@cache
def _code_stamp() -> str:
    """What every namespace depends on, told without reading a source: the Python version,
    each of cq's files by path, size and modification time (a changed module has another
    stamp, so its namespaces are worked out again), and the installed wheels' versions."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"py{sys.version_info[0]}.{sys.version_info[1]};".encode())
    for path in sorted(_package_files()):
        try:
            st = os.stat(path)
        except OSError:
            continue
        digest.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode(errors="replace"))
    for dist, version in sorted(installed_versions().items()):
        digest.update(f"{dist}={version};".encode())
    return digest.hexdigest()


def derived_namespace(name: str, builders: tuple[str, ...]) -> str:
    """``namespace`` worked out from the sources of the builders' import closure."""
    modules = code_closure(builders)
    digest = hashlib.blake2b(digest_size=6)
    digest.update(f"py{sys.version_info[0]}.{sys.version_info[1]};".encode())
    outside: set[str] = set()
    for module in sorted(modules):
        digest.update(f"{module}\0".encode() + _source_digest(module))
        outside |= _outside_imports(module)
    for package in sorted(outside):
        digest.update(f"{package}={dist_version(package)};".encode())
    return f"{name}-{digest.hexdigest()}"


def code_closure(roots: tuple[str, ...]) -> frozenset[str]:
    """The cq modules ``roots`` import, directly or not. A package's ``__init__`` counts when
    it is imported itself (its re-exports), not as the parent of an imported submodule."""
    seen: set[str] = set()
    todo = [m for m in roots if _path(m) is not None]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += _cq_imports(module)
    return frozenset(seen)


@cache
def _cq_imports(module: str) -> tuple[str, ...]:
    """The cq modules a cq module's import statements name (read once per process: the
    namespaces a search asks for walk the same modules, ~800 visits for a question)."""
    return tuple(m for m in _module_imports(module) if _path(m) is not None)


@cache
def _outside_imports(module: str) -> frozenset[str]:
    """The third-party packages a cq module imports."""
    return frozenset(_third_party(_module_imports(module)))


@cache
def _source_digest(module: str) -> bytes:
    """A module's source, hashed once per process: the namespaces a search asks for share
    most of their modules (hashing each closure's sources whole cost 10-20 ms a search)."""
    return hashlib.blake2b(_source(module), digest_size=16).digest()


@cache
def _source(module: str) -> bytes:
    path = _path(module)
    if path is None:
        return b""
    with open(path, "rb") as fh:
        return fh.read()


def _path(module: str) -> str | None:
    """The file of a cq module (None for anything else)."""
    return _module_files().get(module)


@cache
def _module_files() -> dict[str, str]:
    """Each cq module's file by the module's name (a package's ``__init__.py`` under the
    package's name, a module file winning over a package of the same name): import
    statements name ~1,100 candidates a search, most of them no module."""
    parent = os.path.dirname(_PACKAGE)
    named: dict[str, str] = {}
    for path in sorted(_package_files(), key=lambda p: not p.endswith("__init__.py")):
        module = os.path.relpath(path[: -len(".py")], parent).replace(os.sep, ".")
        named[module.removesuffix(".__init__")] = path
    return named


@cache
def _package_files() -> frozenset[str]:
    """Every ``.py`` file of the cq package: one walk instead of a stat per candidate module
    name (a search derives several namespaces, each a stat per name; their cost:
    bench/results/2026-11-29-figures-from-cq.md)."""
    return frozenset(
        os.path.join(folder, name)
        for folder, _dirs, names in os.walk(_PACKAGE)
        for name in names
        if name.endswith(".py")
    )


@cache
def _module_imports(module: str) -> tuple[str, ...]:
    """``_imports`` of a cq module's source, read once per process (namespaces share modules)."""
    return tuple(_imports(_source(module)))


def _imports(source: bytes) -> list[str]:
    """Modules an import statement anywhere in ``source`` names (``from a import b`` gives
    ``a`` and ``a.b``: ``b`` may be a submodule)."""
    found: list[str] = []
    for match in _IMPORT.finditer("\n" + source.decode("utf-8")):
        origin, grouped, names, plain = match.groups()
        if origin is not None:
            found.append(origin)
            listed = (grouped or names or "").replace("\n", " ").split(",")
            found += [f"{origin}.{n.split()[0]}" for n in listed if n.strip()]
        else:
            found += [n.split()[0] for n in plain.split(",") if n.strip()]
    return found


def _third_party(imported: Iterable[str]) -> set[str]:
    """Top-level packages among ``imported`` that are neither cq nor the standard library."""
    tops = {m.split(".")[0] for m in imported}
    return {t for t in tops if t != "cq" and t not in sys.stdlib_module_names}
