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
from cq.parse import Corpus, SourceFile

_Symbols = dict[str, dict[str, int]]


def compile_tables(files: list[tuple[str, SourceFile]]) -> dict[str, _Symbols]:
    """The symbol tables of ``(digest, file)`` pairs, by digest: a pure function of each
    file's text, computed wherever the caller runs (this process or a helper)."""
    out: dict[str, _Symbols] = {}
    for digest, source in files:
        text = source.text
        if text is None:
            text = source.data.decode("utf-8", "replace")
        out[digest] = python_symbols(text, source.path)
    return out


class Bindings:
    """One search's symbol tables of the shown files (hits of confidence at least
    ``t.symtable_min_confidence``, files up to ``t.max_symtable_bytes``: a compile costs about
    half a second per MiB): those the cache holds, looked up at once; the rest compiled by
    ``compile`` (here, or by a forked helper, ``cq.forked``: a table is a pure function of the
    file's text) and handed to ``attach``, which sets the hits' flags."""

    def __init__(
        self, corpus: Corpus, shown: list[Finding], t: EnrichTuning, use_cache: bool
    ) -> None:
        self.wanted: dict[str, list[int]] = defaultdict(list)  # file -> its flagged hits
        for i, f in enumerate(shown):
            if (
                f.language == "python"
                and f.category in CODE_CATEGORIES
                and f.confidence >= t.symtable_min_confidence
            ):
                self.wanted[f.file].append(i)
        self.sources = {rel: corpus.source(rel, "python") for rel in self.wanted}
        self.by_digest: dict[str, list[str]] = defaultdict(list)
        for rel, s in self.sources.items():
            if s is not None and len(s.data) <= t.max_symtable_bytes:
                self.by_digest[s.digest].append(rel)
        self.store = PayloadCache(
            "symbols", _Symbols, ("cq.enrich.symbols",), enabled=use_cache and bool(self.wanted)
        )
        self.found = self.store.get_many(self.by_digest) if self.by_digest else {}

    def missing(self) -> dict[str, str]:
        """The files to compile, one per content: digest -> file."""
        return {d: rels[0] for d, rels in self.by_digest.items() if d not in self.found}

    def compile(self, digests: list[str]) -> dict[str, _Symbols]:
        """The tables of these contents (``missing``'s digests); no cache read or write."""
        return compile_tables(self.files(digests))

    def files(self, digests: list[str]) -> list[tuple[str, SourceFile]]:
        """Each of these contents with the file that holds it (the first of them)."""
        out: list[tuple[str, SourceFile]] = []
        for digest in digests:
            source = self.sources[self.by_digest[digest][0]]
            assert source is not None
            out.append((digest, source))
        return out

    def attach(self, shown: list[Finding], compiled: dict[str, _Symbols]) -> list[Finding]:
        """``shown`` with ``symtable`` set where a flag applies; ``compiled`` (every missing
        table) goes to the cache."""
        for digest, symbols in compiled.items():
            self.store.add(digest, symbols)
        self.store.flush()
        tables = self.found | compiled
        out = list(shown)
        for digest, rels in self.by_digest.items():
            symbols = tables[digest]
            for rel in rels:
                if symbols:
                    self._flag(out, rel, symbols)
        return out

    def _flag(self, out: list[Finding], rel: str, symbols: _Symbols) -> None:
        for i in self.wanted[rel]:
            f = out[i]
            scope = f.containing_scope
            if f.category == "definition" and scope:
                scope = scope.rpartition(".")[0] or None  # a def's name is bound in its parent
            flags = flags_for(symbols, scope, f.text.rpartition(".")[2])
            if flags is not None:
                out[i] = msgspec.structs.replace(f, symtable=flags)
