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
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Iterable
from functools import cache
from typing import Generic, TypeVar

import msgspec

from cq.cache.dists import dist_version
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
        self.namespace = namespace(name, builders)
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
def namespace(name: str, builders: tuple[str, ...]) -> str:
    """``<name>-<hash>`` of the builders' code (with what it imports) and its environment."""
    modules = code_closure(builders)
    digest = hashlib.blake2b(digest_size=6)
    digest.update(f"py{sys.version_info[0]}.{sys.version_info[1]};".encode())
    outside: set[str] = set()
    for module in sorted(modules):
        digest.update(f"{module}\0".encode() + _source(module))
        outside.update(_third_party(_module_imports(module)))
    for package in sorted(outside):
        digest.update(f"{package}={dist_version(package)};".encode())
    return f"{name}-{digest.hexdigest()}"


def code_closure(roots: tuple[str, ...]) -> frozenset[str]:
    """The cq modules ``roots`` import, directly or not. A package's ``__init__`` counts when
    it is imported itself (its re-exports), not as the parent of an imported submodule."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        module = todo.pop()
        if module in seen or _path(module) is None:
            continue
        seen.add(module)
        todo += [m for m in _module_imports(module) if m.split(".")[0] == "cq"]
    return frozenset(seen)


@cache
def _source(module: str) -> bytes:
    path = _path(module)
    if path is None:
        return b""
    with open(path, "rb") as fh:
        return fh.read()


@cache
def _path(module: str) -> str | None:
    """The file of a cq module (None for anything else)."""
    parts = module.split(".")
    if parts[0] != "cq":
        return None
    base = os.path.join(_PACKAGE, *parts[1:])
    files = _package_files()
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if candidate in files:
            return candidate
    return None


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
