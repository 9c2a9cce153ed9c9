"""ast-grep and tree-sitter parses of a ``SourceFile``, cached by content hash (bounded LRU)."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from cq.parse.source import SourceFile

if TYPE_CHECKING:
    from ast_grep_py import SgRoot

_MAX_ENTRIES = 256
_registry: dict[str, Lru] = {}


class Lru:
    """A small LRU map; one instance per kind of parse, counting hits and misses by name."""

    def __init__(self, size: int, name: str) -> None:
        self.size = size
        self.items: OrderedDict[str, Any] = OrderedDict()
        self.hits = self.misses = 0
        _registry[name] = self

    def get(self, key: str) -> Any | None:
        value = self.items.get(key)
        if value is not None:
            self.items.move_to_end(key)
            self.hits += 1
        else:
            self.misses += 1
        return value

    def put(self, key: str, value: Any) -> None:
        self.items[key] = value
        self.items.move_to_end(key)
        while len(self.items) > self.size:
            self.items.popitem(last=False)


_sg_cache = Lru(_MAX_ENTRIES, "sg")
_ts_cache = Lru(_MAX_ENTRIES, "tree_sitter")


def cache_stats() -> dict[str, int]:
    """Hits, misses and entries of every parse cache of this process (the MCP server's
    ``stats`` tool shows them: a warm server answers repeat searches from these caches)."""
    out: dict[str, int] = {}
    for name, lru in sorted(_registry.items()):
        out |= {f"{name}.hits": lru.hits, f"{name}.misses": lru.misses}
        out[f"{name}.entries"] = len(lru.items)
    return out


def sg_root(source: SourceFile) -> SgRoot | None:
    """The ast-grep root of a UTF-8 file (None for undecodable files)."""
    if source.text is None:
        return None
    key = f"{source.language}:{source.digest}"
    root = _sg_cache.get(key)
    if root is None:
        from ast_grep_py import SgRoot

        root = SgRoot(source.text, source.language)
        _sg_cache.put(key, root)
    return root


_searches_again = False  # ``searches_again``


def searches_again() -> None:
    """This process serves search after search (the server's search processes, ``cq mcp``'s:
    ``cq.server.warm``): the enrichment's ast-grep trees are of whole files, which its later
    searches reuse for other hits of the same files, not of the statement holding a hit
    (``cq.enrich.python``), which a one-shot search parses instead."""
    global _searches_again
    _searches_again = True


def statements_alone() -> bool:
    """Whether ast-grep parses a hit's top-level statement rather than its file."""
    return not _searches_again


def sg_statement(source: SourceFile, start: int, end: int) -> SgRoot:
    """The ast-grep root of the bytes ``start:end`` of a UTF-8 file, whole lines (one
    top-level statement: ``cq.enrich.nodes.statement_of``)."""
    key = f"{source.language}:{source.digest}:{start}:{end}"
    root = _sg_cache.get(key)
    if root is None:
        from ast_grep_py import SgRoot

        root = SgRoot(source.data[start:end].decode("utf-8"), source.language)
        _sg_cache.put(key, root)
    return root


def ts_tree(source: SourceFile) -> Any:
    """The tree-sitter tree of the file's bytes (works for non-UTF-8 too)."""
    key = f"{source.language}:{source.digest}"
    tree = _ts_cache.get(key)
    if tree is None:
        tree = ts_parser(source.language).parse(source.data)
        _ts_cache.put(key, tree)
    return tree


def ts_span(source: SourceFile, start: int, end: int) -> Any:
    """The tree-sitter tree of the bytes ``start:end`` of the file, whole lines (top-level
    statements: ``cq.enrich.python``), parsed alone."""
    key = f"{source.language}:{source.digest}:{start}:{end}"
    tree = _ts_cache.get(key)
    if tree is None:
        tree = ts_parser(source.language).parse(source.data[start:end])
        _ts_cache.put(key, tree)
    return tree


_parsers: dict[str, Any] = {}


def ts_parser(language: str) -> Any:
    parser = _parsers.get(language)
    if parser is None:
        import tree_sitter

        if language == "python":
            import tree_sitter_python as grammar
        else:
            import tree_sitter_rust as grammar
        parser = tree_sitter.Parser(tree_sitter.Language(grammar.language()))
        _parsers[language] = parser
    return parser
