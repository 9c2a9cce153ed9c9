"""Python ``symtable`` binding flags of the findings a report shows.

Flags cost a compile of the whole file (more than its tree-sitter parse), and nothing ranks
by them, so they are detail of the shown hits: computed only for shown Python findings of
code categories with confidence >= 0.7, and kept in the persistent cache per content hash.
"""

from __future__ import annotations

from collections import defaultdict

import msgspec

from cq.cache.payloads import PayloadCache
from cq.enrich.symbols import flags_for, python_symbols
from cq.model import CODE_CATEGORIES, Finding
from cq.model.tuning import EnrichTuning
from cq.parse import Corpus

_Symbols = dict[str, dict[str, int]]


def attach_bindings(
    corpus: Corpus, shown: list[Finding], t: EnrichTuning, use_cache: bool
) -> tuple[list[Finding], int]:
    """``shown`` with ``symtable`` set where a flag applies (confidence at least
    ``t.symtable_min_confidence``, files up to ``t.max_symtable_bytes``: a compile costs
    about half a second per MiB); how many files were compiled."""
    wanted: dict[str, list[int]] = defaultdict(list)
    for i, f in enumerate(shown):
        if (
            f.language == "python"
            and f.category in CODE_CATEGORIES
            and f.confidence >= t.symtable_min_confidence
        ):
            wanted[f.file].append(i)
    if not wanted:
        return shown, 0
    tables, compiled = _symbol_tables(corpus, list(wanted), t.max_symtable_bytes, use_cache)
    out = list(shown)
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
    return out, compiled


def _symbol_tables(
    corpus: Corpus, files: list[str], max_bytes: int, use_cache: bool
) -> tuple[dict[str, _Symbols], int]:
    """Each file's tables (files with the same content share one compile)."""
    sources = {rel: corpus.source(rel, "python") for rel in files}
    by_digest: dict[str, list[str]] = defaultdict(list)
    for rel, s in sources.items():
        if s is not None and len(s.data) <= max_bytes:
            by_digest[s.digest].append(rel)
    store = PayloadCache("symbols", _Symbols, ("cq.enrich.symbols",), enabled=use_cache)
    found = store.get_many(by_digest)
    compiled = 0
    for digest, rels in by_digest.items():
        if digest not in found:
            source = sources[rels[0]]
            assert source is not None
            text = source.text
            if text is None:
                text = source.data.decode("utf-8", "replace")
            found[digest] = python_symbols(text, rels[0])
            store.add(digest, found[digest])
            compiled += 1
    store.flush()
    return {rel: found[d] for d, rels in by_digest.items() for rel in rels}, compiled
