"""Python-only parses: the ``ast`` module of a file and LibCST metadata of a source text.

Both are cached in bounded LRUs keyed by content hash, beside the ast-grep and tree-sitter
caches, so every enrichment stage of every hit in a file reuses one parse. A file that does not
parse caches its ``SyntaxError`` too, so a broken file costs one attempt per content.
LibCST is imported only when ``cst_metadata`` is first called (it costs ~0.3 s to import).
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterator
from functools import cache
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
            for node in _statements(py_ast(source).body)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        )
        _imports_cache.put(source.digest, cached)
    return cached


# Where a statement holds statements: an import is one, never part of an expression, so
# these are all a search for imports enters (``ast.walk`` visits every expression node too:
# 7x the time on the stdlib's modules).
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """The statements of ``body`` and of every block nested in them (with except handlers
    and match cases, which hold blocks)."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        for field in _BODIES:
            block = getattr(node, field, None)
            if block:
                stack.extend(block)


class CstMetadata:
    """A parsed LibCST module with the metadata enrichment reads, resolved once: positions and
    scopes. Parents and qualified names are derived for the one node a hit needs (LibCST's
    providers for them walk every node and cost as much again as both of these)."""

    def __init__(self, module: libcst.Module, resolved: Any, providers: tuple[Any, ...]) -> None:
        self.module = module
        positions, scopes = providers
        self.positions = resolved[positions]
        self.scopes = resolved[scopes]

    def parents_of(self, target: libcst.CSTNode) -> dict[libcst.CSTNode, libcst.CSTNode]:
        """Each ancestor of ``target`` (and ``target``) mapped to its parent, found by descending
        from the module through the children whose positions contain ``target``'s (a def's
        or class's range starts after its decorators: theirs counts), else by a full search."""
        goal = self.positions[target]
        low, high = (goal.start.line, goal.start.column), (goal.end.line, goal.end.column)

        def may_hold(node: libcst.CSTNode) -> bool:
            where = self.positions.get(node)
            if where is None:
                return False
            decorators = getattr(node, "decorators", None)
            start = self.positions[decorators[0]].start if decorators else where.start
            return (start.line, start.column) <= low and (where.end.line, where.end.column) >= high

        path = _path_to(self.module, target, may_hold) or _path_to(
            self.module, target, lambda _: True
        )
        return dict(zip(path[1:], path, strict=False))

    def qualified_names(self, node: libcst.CSTNode) -> set[Any]:
        """What ``QualifiedNameProvider`` would give for ``node``, computed for it alone."""
        scope = self.scopes.get(node)
        return set(scope.get_qualified_names_for(node)) if scope is not None else set()


def cst_metadata(text: str) -> CstMetadata:
    """LibCST module + position and scope metadata of ``text`` (cached)."""
    key = hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()
    cached = _cst_cache.get(key)
    if cached is None:
        import libcst
        from libcst.metadata import MetadataWrapper, PositionProvider

        try:
            module = libcst.parse_module(text)
            wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
            providers = (PositionProvider, _scopes_provider())
            cached = CstMetadata(module, wrapper.resolve_many(providers), providers)
        except Exception as exc:  # LibCST's parser and providers raise several types
            cached = exc
        _cst_cache.put(key, cached)
    if isinstance(cached, Exception):
        raise cached
    return cached


@cache
def _scopes_provider() -> type[Any]:
    """LibCST's ``ScopeProvider``, with every batchable visitor's methods listed once a
    class. LibCST lists them with ``inspect.getmembers`` on every instance, and a parse makes
    two (the scope provider and the expression-context provider it depends on): 1.7 of a
    skeleton's 7.5 ms of metadata (the skeletons of TextIOWrapper's first 60 hits in the
    stdlib, 740 bytes on average: bench/results/2026-11-30-speed12). The methods are the
    class's, so the names found once are every instance's; LibCST's own method lists them."""
    from libcst import BatchableCSTVisitor
    from libcst.metadata import ScopeProvider

    list_visitors = BatchableCSTVisitor.get_visitors
    listed: dict[type[Any], tuple[str, ...]] = {}

    def get_visitors(self: Any) -> dict[str, Any]:
        names = listed.get(type(self))
        if names is None:
            names = listed[type(self)] = tuple(list_visitors(self))
        return {name: getattr(self, name) for name in names}

    BatchableCSTVisitor.get_visitors = get_visitors  # type: ignore[method-assign]
    return ScopeProvider


def _path_to(root: Any, target: Any, may_hold: Any) -> list[Any]:
    """Nodes from ``root`` down to ``target`` (identity), entering only ``may_hold`` nodes;
    empty when ``target`` was not reached."""
    path = [root]

    def descend(node: Any) -> bool:
        for child in node.children:
            if child is not target and not may_hold(child):
                continue
            path.append(child)
            if child is target or descend(child):
                return True
            path.pop()
        return False

    return path if descend(root) else []
