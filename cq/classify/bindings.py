"""Attach Python ``symtable`` binding flags to the findings a report shows.

Flags cost a compile of the whole file (more than its tree-sitter parse), and nothing ranks
by them, so they are computed after ranking, only for shown Python findings of code
categories with confidence >= 0.7, and kept in the persistent cache per content hash.
"""

from __future__ import annotations

import hashlib
import sys
from collections import defaultdict
from functools import cache
from pathlib import Path

import msgspec

from cq.classify.symbols import flags_for, python_symbols
from cq.model import Finding
from cq.parse import load_source

MIN_CONFIDENCE = 0.7
# A compile costs about half a second per MiB; a bigger (generated) file gets no flags.
MAX_SYMTABLE_BYTES = 1024 * 1024
_CODE = {"definition", "callsite", "import", "from_import", "assignment", "reference", "annotation"}
_Symbols = dict[str, dict[str, int]]


@cache
def _namespace() -> str:
    """``symbols-py<X.Y>-<hash of the table code>``: symtable differs between Pythons."""
    code = (Path(__file__).parent / "symbols.py").read_bytes()
    digest = hashlib.blake2b(code, digest_size=6).hexdigest()
    return f"symbols-py{sys.version_info[0]}.{sys.version_info[1]}-{digest}"


def attach_bindings(
    root: Path, ranked: list[Finding], limit: int, use_cache: bool, counters: dict[str, int]
) -> list[Finding]:
    """``ranked`` with ``symtable`` set on the first ``limit`` findings (all when 0)."""
    shown = len(ranked) if limit <= 0 else min(limit, len(ranked))
    wanted: dict[str, list[int]] = defaultdict(list)
    for i in range(shown):
        f = ranked[i]
        if f.language == "python" and f.category in _CODE and f.confidence >= MIN_CONFIDENCE:
            wanted[f.file].append(i)
    if not wanted:
        return ranked
    tables = _symbol_tables(root, list(wanted), use_cache, counters)
    out = list(ranked)
    for rel, indexes in wanted.items():
        symbols = tables.get(rel)
        if not symbols:
            continue
        for i in indexes:
            f = out[i]
            scope = f.containing_scope
            if f.category == "definition" and scope:
                scope = scope.rpartition(".")[0] or None  # a def's name is bound in its parent
            flags = flags_for(symbols, scope, f.text.rpartition(".")[2])
            if flags is not None:
                out[i] = msgspec.structs.replace(f, symtable=flags)
    return out


def _symbol_tables(
    root: Path, files: list[str], use_cache: bool, counters: dict[str, int]
) -> dict[str, _Symbols]:
    sources = {rel: load_source(root, rel, "python") for rel in files}
    digests = {
        s.digest: rel
        for rel, s in sources.items()
        if s is not None and len(s.data) <= MAX_SYMTABLE_BYTES
    }
    tables: dict[str, _Symbols] = {}
    decoder = msgspec.msgpack.Decoder(_Symbols)
    store = None
    if use_cache:
        from cq.cache import open_store

        store = open_store()
        for digest, blob in store.get_many(_namespace(), digests).items():
            try:
                tables[digests[digest]] = decoder.decode(blob)
            except (msgspec.DecodeError, msgspec.ValidationError):
                store.delete(_namespace(), digest)
    fresh: dict[str, bytes] = {}
    for digest, rel in digests.items():
        if rel in tables:
            continue
        source = sources[rel]
        assert source is not None
        text = source.text if source.text is not None else source.data.decode("utf-8", "replace")
        tables[rel] = python_symbols(text, rel)
        fresh[digest] = msgspec.msgpack.encode(tables[rel])
    counters["symtable_compiled"] = counters.get("symtable_compiled", 0) + len(fresh)
    if store is not None and fresh:
        store.put_many(_namespace(), fresh)
    return tables
