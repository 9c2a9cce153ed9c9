"""A small stand-in module for LibCST: the hit's definitions verbatim, the rest as stubs.

LibCST with scope metadata costs in proportion to the source it is given (about a second for
a file of a thousand lines: bench/results/2026-11-29-figures-from-cq.md), so stage 4
never parses whole files. It parses a skeleton instead: the module, class and function bodies
on the path to the hit keep their header lines verbatim; every sibling statement that binds a
name used in the hit's innermost function (or statement) becomes a one-line stub of the same
kind (imports unparsed verbatim, ``def f(): ...``, ``class C: ...``, ``x = None``); other
siblings vanish. Scopes and bindings of the names the hit can see are preserved, so qualified
names, binding candidates and import alias chains come out as for the whole file, with line
numbers mapped back through ``line_map``. Compound statements other than defs and classes
are kept verbatim.
"""

from __future__ import annotations

import ast
import re

import msgspec

from cq.parse.python_syntax import AST_DEFINITIONS, AST_FUNCTIONS, scope_nodes

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Skeleton(msgspec.Struct, frozen=True):
    """Skeleton source, original 1-based line of each of its lines, and the hit's row in it."""

    text: str
    line_map: tuple[int, ...]
    hit_row: int  # 1-based line of the hit inside ``text``


def build_skeleton(lines: list[str], tree: ast.Module, hit_line: int) -> Skeleton | None:
    """Skeleton of a module for a hit on ``hit_line`` (1-based); None outside any statement."""
    builder = _Builder(lines, hit_line)
    builder.names = _names_near_hit(lines, tree, hit_line)
    builder.block(tree.body, "")
    if hit_line not in builder.line_map:
        return None
    return Skeleton(
        text="".join(line + "\n" for line in builder.out),
        line_map=tuple(builder.line_map),
        hit_row=builder.line_map.index(hit_line) + 1,
    )


class _Builder:
    def __init__(self, lines: list[str], hit_line: int) -> None:
        self.lines, self.hit_line = lines, hit_line
        self.names: set[str] = set()
        self.out: list[str] = []
        self.line_map: list[int] = []

    def verbatim(self, first: int, last: int) -> None:
        for line in range(first, last + 1):
            self.out.append(self.lines[line - 1])
            self.line_map.append(line)

    def block(self, body: list[ast.stmt], indent: str) -> None:
        emitted = len(self.out)
        for stmt in body:
            if _first(stmt) <= self.hit_line <= _last(stmt):
                self.path(stmt)
            else:
                self.stub(stmt)
        if len(self.out) == emitted and body:
            self.out.append(indent + "pass")
            self.line_map.append(body[0].lineno)

    def path(self, stmt: ast.stmt) -> None:
        """A statement holding the hit: defs and classes open up, the rest stays verbatim."""
        body = getattr(stmt, "body", None)
        if not isinstance(stmt, AST_DEFINITIONS) or not body or self._shares_line(body[0]):
            self.verbatim(_first(stmt), _last(stmt))
            return
        first_body = _first(body[0])
        if self.hit_line < first_body:  # the hit is in the header or decorators
            self.verbatim(_first(stmt), _last(stmt))
            return
        self.verbatim(_first(stmt), first_body - 1)
        self.block(body, self._indent(body[0]))

    def stub(self, stmt: ast.stmt) -> None:
        bound = _bound_names(stmt) & self.names
        if not bound:
            return
        indent = self._indent(stmt)
        if isinstance(stmt, ast.Import | ast.ImportFrom | ast.Global | ast.Nonlocal):
            texts = [ast.unparse(stmt)]
        elif isinstance(stmt, ast.ClassDef):
            texts = [f"class {stmt.name}: ..."]
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            texts = [f"def {stmt.name}(): ..."]
        else:
            imports = [n for n in scope_nodes([stmt]) if isinstance(n, ast.Import | ast.ImportFrom)]
            texts = [ast.unparse(n) for n in imports if _bound_names(n) & bound]
            bound -= {name for n in imports for name in _bound_names(n)}
            texts += [f"{name} = None" for name in sorted(bound)]
        for text in texts:
            self.out.append(indent + text)
            self.line_map.append(stmt.lineno)

    def _indent(self, stmt: ast.stmt) -> str:
        line = self.lines[stmt.lineno - 1]
        return line[: len(line) - len(line.lstrip())]

    def _shares_line(self, stmt: ast.stmt) -> bool:
        """A body statement that starts on its header's line (``def f(): return 1``)."""
        prefix = self.lines[stmt.lineno - 1].encode("utf-8")[: stmt.col_offset]
        return bool(prefix.strip())


def _names_near_hit(lines: list[str], tree: ast.Module, hit_line: int) -> set[str]:
    """Identifiers in the hit's innermost function, or its innermost statement."""
    path: list[ast.stmt] = []
    body: list[ast.stmt] = tree.body
    while body:
        stmt = next((s for s in body if _first(s) <= hit_line <= _last(s)), None)
        if stmt is None:
            break
        path.append(stmt)
        body = [s for s in getattr(stmt, "body", None) or [] if isinstance(s, ast.stmt)]
    funcs = [s for s in path if isinstance(s, AST_FUNCTIONS)]
    holder = funcs[-1] if funcs else (path[-1] if path else None)
    if holder is None:
        return set()
    text = "\n".join(lines[_first(holder) - 1 : _last(holder)])
    return set(_IDENT.findall(text))


def _bound_names(stmt: ast.stmt) -> set[str]:
    """Names a statement binds in the scope it sits in (not inside nested scopes)."""
    if isinstance(stmt, AST_DEFINITIONS):
        return {stmt.name}
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    if isinstance(stmt, ast.Global | ast.Nonlocal):
        return set(stmt.names)
    names: set[str] = set()
    for node in scope_nodes([stmt]):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, AST_DEFINITIONS) and node is not stmt:
            names.add(node.name)
    return names


def _first(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None) or []
    return min([stmt.lineno, *(d.lineno for d in decorators)])


def _last(stmt: ast.stmt) -> int:
    return stmt.end_lineno or stmt.lineno
