"""Python-only parses: the ``ast`` module of a file and LibCST metadata of a source text.

Both are cached in bounded LRUs keyed by content hash, beside the ast-grep and tree-sitter
caches, so every enrichment stage of every hit in a file reuses one parse. A file that does not
parse caches its ``SyntaxError`` too, so a broken file costs one attempt per content.
LibCST is imported only when ``cst_metadata`` is first called (it costs ~0.3 s to import).
"""

from __future__ import annotations

import ast
import hashlib
from typing import TYPE_CHECKING, Any

from cq.parse.source import SourceFile
from cq.parse.trees import Lru

if TYPE_CHECKING:
    import libcst

_ast_cache = Lru(64, "py_ast")
_imports_cache = Lru(64, "py_imports")
_cst_cache = Lru(64, "libcst")


def py_ast(source: SourceFile) -> ast.Module:
    """The file's ``ast`` module; raises the (cached) ``SyntaxError``/``ValueError`` if none."""
    cached = _ast_cache.get(source.digest)
    if cached is None:
        try:
            cached = ast.parse(source.data, filename=source.path)
        except (SyntaxError, ValueError) as exc:
            cached = exc
        _ast_cache.put(source.digest, cached)
    if isinstance(cached, Exception):
        raise cached
    return cached


def imported_names(source: SourceFile) -> frozenset[str]:
    """Every local name an import statement anywhere in the file binds (from ``py_ast``)."""
    cached = _imports_cache.get(source.digest)
    if cached is None:
        cached = frozenset(
            (alias.asname or alias.name).split(".")[0]
            for node in ast.walk(py_ast(source))
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        )
        _imports_cache.put(source.digest, cached)
    return cached


class CstMetadata:
    """A parsed LibCST module with the metadata enrichment reads, resolved once."""

    def __init__(self, module: libcst.Module, resolved: Any, providers: tuple[Any, ...]) -> None:
        self.module = module
        positions, parents, scopes, qualified_names = providers
        self.positions = resolved[positions]
        self.parents = resolved[parents]
        self.scopes = resolved[scopes]
        self.qualified_names = resolved[qualified_names]


def cst_metadata(text: str) -> CstMetadata:
    """LibCST module + position/parent/scope/qualified-name metadata of ``text`` (cached)."""
    key = hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()
    cached = _cst_cache.get(key)
    if cached is None:
        import libcst
        from libcst.metadata import (
            MetadataWrapper,
            ParentNodeProvider,
            PositionProvider,
            QualifiedNameProvider,
            ScopeProvider,
        )

        try:
            module = libcst.parse_module(text)
            wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
            providers = (PositionProvider, ParentNodeProvider, ScopeProvider, QualifiedNameProvider)
            cached = CstMetadata(module, wrapper.resolve_many(providers), providers)
        except Exception as exc:  # LibCST's parser and providers raise several types
            cached = exc
        _cst_cache.put(key, cached)
    if isinstance(cached, Exception):
        raise cached
    return cached
