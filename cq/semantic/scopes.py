"""What a Python scope binds, read from its ``ast``: the facts ``syntax_resolve.py`` needs to
follow a name exactly, and to give up when it cannot.

A name is followed only when its binding is certain: bound once, or last in straight-line
code of the module or class body; bound in a branch (``if``, ``try``, a loop, ``with``),
declared ``global`` in a function, or rebound by a ``from m import *`` that cannot be read
makes it uncertain, and the resolver then says nothing. Pure functions of the tree.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import msgspec

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_OUTER_FIELDS = ("decorator_list", "args", "returns", "bases", "keywords", "type_params")


class Binding(msgspec.Struct, frozen=True):
    """One statement that binds a name: ``kind`` is ``def``, ``class``, ``import`` (``import
    a.b``: ``node`` is the alias), ``from`` (``from m import a``: the alias, ``statement`` the
    ``ImportFrom``), ``star`` (``from m import *``) or ``other`` (an assignment, a loop target,
    ...); ``branch`` when it is not in straight-line code of the body."""

    kind: str
    line: int
    node: ast.AST
    statement: ast.AST
    branch: bool


class BodyBindings(msgspec.Struct, frozen=True):
    """A module's or class's body: the bindings of each name in source order, its star
    imports, and the names some function of it declares ``global``."""

    names: dict[str, list[Binding]]
    stars: list[Binding]
    declared_global: frozenset[str]


def body_bindings(body: list[ast.stmt], may_declare_global: bool = True) -> BodyBindings:
    """``may_declare_global`` False (the text has no ``global``) skips the walk for them."""
    names: dict[str, list[Binding]] = {}
    stars: list[Binding] = []
    declared: set[str] = set()
    for binding, name in _statements(body, branch=False):
        if binding.kind == "star":
            stars.append(binding)
        else:
            names.setdefault(name, []).append(binding)
    for statement in body if may_declare_global else []:
        for node in ast.walk(statement):
            if isinstance(node, ast.Global):
                declared.update(node.names)
    return BodyBindings(names=names, stars=stars, declared_global=frozenset(declared))


def _statements(body: list[ast.stmt], branch: bool) -> Iterator[tuple[Binding, str]]:
    for s in body:
        if isinstance(s, FUNCTIONS):
            yield Binding("def", s.lineno, s, s, branch), s.name
        elif isinstance(s, ast.ClassDef):
            yield Binding("class", s.lineno, s, s, branch), s.name
        elif isinstance(s, ast.Import):
            for alias in s.names:
                name = alias.asname or alias.name.split(".")[0]
                yield Binding("import", s.lineno, alias, s, branch), name
        elif isinstance(s, ast.ImportFrom):
            for alias in s.names:
                kind = "star" if alias.name == "*" else "from"
                yield Binding(kind, s.lineno, alias, s, branch), alias.asname or alias.name
        else:
            inner = [getattr(s, f, None) or [] for f in ("body", "orelse", "finalbody")]
            inner += [h.body for h in getattr(s, "handlers", None) or []]
            inner += [c.body for c in getattr(s, "cases", None) or []]
            for block in inner:
                yield from _statements(block, branch=True)
            for name in stored_names(s, skip_blocks=True):
                yield Binding("other", s.lineno, s, s, branch or any(inner)), name


def stored_names(node: ast.AST, skip_blocks: bool = False) -> Iterator[str]:
    """Names a statement binds besides defs and imports (assignment and loop targets,
    ``with ... as``, ``except ... as``, match captures, walrus), not looking into nested
    scopes (nor, with ``skip_blocks``, into the statement's own blocks)."""
    stack = [node]
    while stack:
        current = stack.pop()
        for field, value in ast.iter_fields(current):
            if skip_blocks and current is node and field in _BLOCK_FIELDS:
                continue
            for child in value if isinstance(value, list) else [value]:
                if not isinstance(child, ast.AST) or isinstance(child, SCOPES):
                    continue
                if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store | ast.Del):
                    yield child.id
                elif isinstance(child, ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
                    if child.name:
                        yield child.name
                elif isinstance(child, ast.MatchMapping) and child.rest:
                    yield child.rest
                stack.append(child)


_BLOCK_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})


class FunctionBindings(msgspec.Struct, frozen=True):
    """A function's (or lambda's, comprehension's) local names: parameters, the defs directly
    in its body (name -> def) and every other local binding; ``global``/``nonlocal`` ones."""

    parameters: tuple[str, ...]
    defs: dict[str, list[ast.AST]]
    others: frozenset[str]
    declared_global: frozenset[str]
    declared_nonlocal: frozenset[str]


def function_bindings(node: ast.AST) -> FunctionBindings:
    if isinstance(node, _COMPREHENSIONS):
        targets = frozenset(n for g in node.generators for n in stored_names(g))
        return FunctionBindings((), {}, targets, frozenset(), frozenset())
    assert isinstance(node, (*FUNCTIONS, ast.Lambda))
    a = node.args
    params = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    params += [p.arg for p in (a.vararg, a.kwarg) if p is not None]
    body = node.body if isinstance(node.body, list) else [ast.Expr(node.body)]
    defs: dict[str, list[ast.AST]] = {}
    others: set[str] = set()
    declared_global: set[str] = set()
    declared_nonlocal: set[str] = set()
    for statement in body:
        if isinstance(statement, (*FUNCTIONS, ast.ClassDef)):
            defs.setdefault(statement.name, []).append(statement)
    for statement in body:
        for child in _local_nodes(statement):
            if isinstance(child, (*FUNCTIONS, ast.ClassDef)) and child not in body:
                others.add(child.name)
            elif isinstance(child, ast.Import | ast.ImportFrom):
                others.update((a.asname or a.name.split(".")[0]) for a in child.names)
            elif isinstance(child, ast.Global):
                declared_global.update(child.names)
            elif isinstance(child, ast.Nonlocal):
                declared_nonlocal.update(child.names)
        others.update(stored_names(statement))
    return FunctionBindings(
        tuple(params),
        defs,
        frozenset(others),
        frozenset(declared_global),
        frozenset(declared_nonlocal),
    )


def _local_nodes(statement: ast.AST) -> Iterator[ast.AST]:
    """``statement`` and what it holds, not entering nested scopes (their defs are yielded)."""
    stack = [statement]
    while stack:
        current = stack.pop()
        yield current
        if current is statement or not isinstance(current, SCOPES):
            stack.extend(ast.iter_child_nodes(current))


def returned_values(function: ast.AST) -> list[ast.expr | None]:
    """What a function hands out: its ``yield`` values when it is a generator, else its
    ``return`` values (None for a bare ``return``), not counting nested scopes."""
    returns: list[ast.expr | None] = []
    yields: list[ast.expr | None] = []
    for statement in getattr(function, "body", []):
        for node in _local_nodes(statement):
            if isinstance(node, ast.Return):
                returns.append(node.value)
            elif isinstance(node, ast.Yield | ast.YieldFrom):
                yields.append(node.value if isinstance(node, ast.Yield) else None)
    return yields if yields else returns


def decorator_names(node: ast.AST) -> list[str]:
    """``@pytest.fixture(scope="x")`` -> ``pytest.fixture``: each decorator's dotted callee."""
    out = []
    for decorator in getattr(node, "decorator_list", []):
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        out.append(dotted(target) or "")
    return out


def dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def call_at(
    tree: ast.Module, line: int, start: int, name: str
) -> tuple[ast.expr, list[ast.AST]] | None:
    """The called expression whose name ends at (``line``, byte ``start`` + name), and the
    scopes around the call (a def's decorators and defaults belong to the outer scope)."""
    end = start + len(name.encode("utf-8"))

    def matches(func: ast.expr) -> bool:
        if isinstance(func, ast.Name):
            return func.id == name and func.lineno == line and func.col_offset == start
        if isinstance(func, ast.Attribute):
            return func.attr == name and func.end_lineno == line and func.end_col_offset == end
        return False

    def visit(node: ast.AST, stack: list[ast.AST]) -> tuple[ast.expr, list[ast.AST]] | None:
        inner = [*stack, node] if isinstance(node, (*SCOPES, *_COMPREHENSIONS)) else stack
        for field, value in ast.iter_fields(node):
            scope = stack if field in _OUTER_FIELDS else inner
            for child in value if isinstance(value, list) else [value]:
                if not isinstance(child, ast.AST):
                    continue
                first, last = getattr(child, "lineno", None), getattr(child, "end_lineno", None)
                if first is not None and last is not None and not first <= line <= last:
                    continue
                if isinstance(child, ast.Call) and matches(child.func):
                    return child.func, scope
                found = visit(child, scope)
                if found is not None:
                    return found
        return None

    return visit(tree, [])


def single_assignment(function: ast.AST, name: str) -> ast.Call | None:
    """``name = C(...)`` when that is the one binding of ``name`` in the function, a statement
    of its body itself (not in a branch)."""
    body = getattr(function, "body", [])
    hits = [
        s
        for s in body
        if isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and s.targets[0].id == name
    ]
    if len(hits) != 1 or not isinstance(hits[0].value, ast.Call):
        return None
    stores = sum(
        1
        for n in ast.walk(function)
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store | ast.Del)
    )
    return hits[0].value if stores == 1 else None


def annotation_of(function: ast.AST, name: str) -> ast.expr | None:
    args = getattr(function, "args", None)
    if args is None:
        return None
    for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
        if arg.arg == name and arg.annotation is not None:
            return arg.annotation if isinstance(arg.annotation, ast.Name | ast.Attribute) else None
    return None


def method_owner(stack: list[ast.AST]) -> tuple[ast.ClassDef, tuple[ast.AST, ...]] | None:
    """The class whose method body the innermost function is (for ``super()``)."""
    for i in range(len(stack) - 1, 0, -1):
        if isinstance(stack[i], FUNCTIONS):
            owner = stack[i - 1]
            return (owner, tuple(stack[: i - 1])) if isinstance(owner, ast.ClassDef) else None
    return None


def in_function(scope: tuple[ast.AST, ...]) -> bool:
    return any(isinstance(n, (*FUNCTIONS, ast.Lambda)) for n in scope)
