"""Python ``symtable`` binding flags of the findings a report shows.

Flags cost a compile (more than a tree-sitter parse of the same text), and nothing ranks by
them, so they are detail of the shown hits: computed only for shown Python findings of code
categories at ``EnrichTuning.symtable_min_confidence`` or above, and kept in the persistent
cache per content hash.

A hit inside a def or class needs only the tables of the scopes around it, and those are
the same compiled from the top-level statements holding the hits (with the file's
``from __future__`` imports, which change how annotations are read) as from the whole file:
a function's or class's flags come from its own body and the functions around it, never
from the module's other statements. So a file whose flagged hits all sit in a def or class
is compiled as those statements alone (``get``'s shown files on the stdlib: 86 CPU-ms
whole, bench/results/2026-11-30-speed16). The module's own table, a scope the statements do
not hold, or a def or class name the statements share with the rest of the file (its
qualified name could be another scope's in the file's tables) takes the whole file.
"""

from __future__ import annotations

import re
from collections import defaultdict

import msgspec

from cq.cache.payloads import PayloadCache
from cq.enrich.nodes import top_level
from cq.enrich.symbols import flags_for, python_symbols
from cq.model import CODE_CATEGORIES, Finding
from cq.model.tuning import EnrichTuning
from cq.parse import Corpus, SourceFile

_Symbols = dict[str, dict[str, int]]
_Runs = tuple[tuple[int, int], ...]

# ``from __future__ import`` at a line's start: the statements to compile with any part
_FUTURE = re.compile(rb"^from[ \t]+__future__[ \t]+import\b", re.MULTILINE)
# a def or class at any depth: the names a file's statements may share
_DEFINED = re.compile(rb"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", re.MULTILINE)


def table_key(digest: str, runs: _Runs | None) -> str:
    """What a table is stored and handed around under: the file's digest, and the byte
    ranges compiled when they are not the whole file (``digest@start-end,...``)."""
    if runs is None:
        return digest
    return digest + "@" + ",".join(f"{start}-{end}" for start, end in runs)


def _runs_of(key: str) -> _Runs | None:
    _, at, spans = key.partition("@")
    if not at:
        return None
    return tuple((int(a), int(b)) for a, _, b in (span.partition("-") for span in spans.split(",")))


def compile_tables(files: list[tuple[str, SourceFile]]) -> dict[str, _Symbols]:
    """The symbol tables of ``(key, file)`` pairs (``table_key``), by key: a pure function of
    the file's text, computed wherever the caller runs (this process or a helper)."""
    out: dict[str, _Symbols] = {}
    for key, source in files:
        runs = _runs_of(key)
        data = source.data if runs is None else b"".join(source.data[a:b] for a, b in runs)
        text = source.text if runs is None else None
        if text is None:
            text = data.decode("utf-8", "replace")
        out[key] = python_symbols(text, source.path)
    return out


def _statements(source: SourceFile, lines: list[int]) -> tuple[_Runs, frozenset[str]]:
    """The top-level statements holding the 1-based ``lines`` with the file's future imports,
    merged, and the def and class names that only they define (a scope whose qualified name
    starts with one of those is no scope of the rest of the file; names are read at any
    depth, which leaves out more, never less)."""
    top = top_level(source)
    starts = source.line_starts()
    found = {top.run(starts[min(line, len(starts)) - 1]) for line in lines}
    found |= {top.run(m.start()) for m in _FUTURE.finditer(source.data)}
    runs: list[tuple[int, int]] = []
    for start, end in sorted(found):
        if runs and start <= runs[-1][1]:
            runs[-1] = (runs[-1][0], max(end, runs[-1][1]))
        else:
            runs.append((start, end))
    inside: set[str] = set()
    outside: set[str] = set()
    for match in _DEFINED.finditer(source.data):
        held = any(start <= match.start(1) < end for start, end in runs)
        (inside if held else outside).add(match.group(1).decode("ascii", "replace"))
    return tuple(runs), frozenset(inside - outside)


def _lookup_scope(finding: Finding) -> str | None:
    """The scope whose table holds ``finding``'s flags (None: the module's): a def's or
    class's name is bound in its parent."""
    scope = finding.containing_scope
    if finding.category == "definition" and scope:
        scope = scope.rpartition(".")[0] or None
    return scope


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
        by_digest: dict[str, list[str]] = defaultdict(list)
        for rel, s in self.sources.items():
            if s is not None and len(s.data) <= t.max_symtable_bytes:
                by_digest[s.digest].append(rel)
        # each content's table: of the statements holding its hits, or of the whole file
        self.by_key: dict[str, list[str]] = {}
        self.own: dict[str, frozenset[str]] = {}  # digest -> names only its runs define
        for digest, rels in by_digest.items():
            hits = [shown[i] for rel in rels for i in self.wanted[rel]]
            source = self.sources[rels[0]]
            assert source is not None
            runs = None
            if source.text is not None and all(_lookup_scope(f) for f in hits):
                runs, self.own[digest] = _statements(source, [f.line for f in hits])
            key = table_key(digest, runs)
            self.by_key[key] = rels
        self.store = PayloadCache(
            "symbols", _Symbols, ("cq.enrich.symbols",), enabled=use_cache and bool(self.wanted)
        )
        self.found = self.store.get_many(self.by_key) if self.by_key else {}

    def missing(self) -> dict[str, str]:
        """The tables to compile, one per content: key (``table_key``) -> file."""
        return {k: rels[0] for k, rels in self.by_key.items() if k not in self.found}

    def compile(self, keys: list[str]) -> dict[str, _Symbols]:
        """The tables of these keys (``missing``'s); no cache read or write."""
        return compile_tables(self.files(keys))

    def files(self, keys: list[str]) -> list[tuple[str, SourceFile]]:
        """Each of these keys with the file that holds its content (the first of them)."""
        out: list[tuple[str, SourceFile]] = []
        for key in keys:
            source = self.sources[self.by_key[key][0]]
            assert source is not None
            out.append((key, source))
        return out

    def attach(self, shown: list[Finding], compiled: dict[str, _Symbols]) -> list[Finding]:
        """``shown`` with ``symtable`` set where a flag applies; ``compiled`` (every missing
        table) goes to the cache. A hit whose scope (as enrichment read it) is not one its
        statements' table holds reads the whole file's, compiled here."""
        tables = self.found | compiled
        out = list(shown)
        for key, rels in self.by_key.items():
            symbols = tables[key]
            whole = key.partition("@")[0]
            for rel in rels:
                hits = self.wanted[rel]
                if key != whole and not self._holds(whole, symbols, [out[i] for i in hits]):
                    if whole not in tables:
                        tables[whole] = compiled[whole] = self._whole(whole, rel)
                    symbols = tables[whole]
                if symbols:
                    self._flag(out, hits, symbols)
        for key, symbols in compiled.items():
            self.store.add(key, symbols)
        self.store.flush()
        return out

    def _holds(self, digest: str, symbols: _Symbols, hits: list[Finding]) -> bool:
        """Whether a table of some statements of a file gives ``hits`` what the file's
        would: each hit's scope is one of its tables, under a def or class name only those
        statements define (so no other scope of the file has its qualified name)."""
        own = self.own[digest]
        for f in hits:
            scope = _lookup_scope(f)
            if scope not in symbols or scope.partition(".")[0] not in own:
                return False
        return True

    def _whole(self, digest: str, rel: str) -> _Symbols:
        """The whole file's table (from the cache when it holds it)."""
        found = self.store.get_many([digest]).get(digest)
        if found is not None:
            return found
        source = self.sources[rel]
        assert source is not None
        return compile_tables([(digest, source)])[digest]

    def _flag(self, out: list[Finding], hits: list[int], symbols: _Symbols) -> None:
        for i in hits:
            f = out[i]
            flags = flags_for(symbols, _lookup_scope(f), f.text.rpartition(".")[2])
            if flags is not None:
                out[i] = msgspec.structs.replace(f, symtable=flags)
