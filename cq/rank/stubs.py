"""Stub definitions: where a name is declared but not implemented.

An ``@overload`` (``typing.overload``, ``typing_extensions.overload``) signature, a function
whose body is ``...`` (a protocol member, an abstract declaration; a docstring before it
allowed) or only raises ``NotImplementedError``, an ``@abstractmethod`` whose body is
``pass``, and anything in a ``.pyi`` stub file declare a name; the implementation is
elsewhere, and that is what an Answer names when the shown findings hold both. Python only,
read from the shown definitions' files through the search's corpus (parsed once, cached by
content hash: enrichment parsed the same files).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from cq.model import Finding, Pattern
from cq.model.language import is_stub
from cq.parse import Corpus, py_ast
from cq.rank.dotted import dotted_query, is_target_definition, last_name
from cq.rank.signals import queried_names

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def stub_definitions(
    findings: Iterable[Finding], patterns: tuple[Pattern, ...], corpus: Corpus
) -> frozenset[tuple[str, int]]:
    """(file, line) of the stubs among the queried names' definitions in ``findings``
    (in rank order), read up to the first one that implements its name (a dotted query's:
    the first target definition), which is where the Answer stops looking."""
    names = queried_names(patterns)
    dotted = dotted_query(patterns)
    stubs: set[tuple[str, int]] = set()
    trees: dict[str, ast.AST | None] = {}
    for f in findings:
        if f.category != "definition" or last_name(f.text) not in names:
            continue
        if f.language == "python" and _is_stub(f, corpus, trees):
            stubs.add((f.file, f.line))
        elif dotted is None or is_target_definition(f, dotted):
            break
    return frozenset(stubs)


def _is_stub(f: Finding, corpus: Corpus, trees: dict[str, ast.AST | None]) -> bool:
    if is_stub(f.file):
        return True
    if f.file not in trees:
        trees[f.file] = _tree(corpus, f.file)
    tree = trees[f.file]
    node = _function_at(tree, f.line) if tree is not None else None
    return node is not None and (_overloaded(node) or _ellipsis_body(node) or _abstract(node))


def abstract_lines(source: str) -> frozenset[int]:
    """The ``def`` lines of the Python functions of ``source`` that only declare their name:
    a body (after a docstring) of ``...``, ``pass`` or ``raise NotImplementedError``: a base
    class's method each subclass implements. Empty when the source does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return frozenset()
    return frozenset(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, _FUNCTIONS) and _declares_only(node)
    )


def _declares_only(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = list(node.body)
    if body and _is_constant(body[0], str):
        body = body[1:]
    if len(body) != 1:
        return False
    only = body[0]
    if isinstance(only, ast.Pass) or _is_constant(only, type(...)):
        return True
    raised = only.exc if isinstance(only, ast.Raise) else None
    if isinstance(raised, ast.Call):
        raised = raised.func
    return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"


def _tree(corpus: Corpus, path: str) -> ast.AST | None:
    source = corpus.source(path, "python")
    if source is None:
        return None
    try:
        return py_ast(source)
    except (SyntaxError, ValueError):
        return None


def _function_at(tree: ast.AST, line: int) -> ast.AST | None:
    """The function whose ``def`` is on ``line`` (decorators are above it), found by going
    down only into the nodes whose lines hold it: a walk of a whole large module costs more
    than its parse."""
    stack = [tree]
    while stack:
        for child in ast.iter_child_nodes(stack.pop()):
            start = getattr(child, "lineno", None)
            if start is None:  # arguments, comprehensions: no lines of their own
                stack.append(child)
            elif start <= line <= (getattr(child, "end_lineno", None) or start):
                if isinstance(child, _FUNCTIONS) and start == line:
                    return child
                stack.append(child)
    return None


def _overloaded(node: ast.AST) -> bool:
    for decorator in getattr(node, "decorator_list", ()):
        if isinstance(decorator, ast.Name) and decorator.id == "overload":
            return True
        if isinstance(decorator, ast.Attribute) and decorator.attr == "overload":
            return True
    return False


def _abstract(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A base class's declaration each subclass implements: an ``@abstractmethod`` whose body
    is a docstring, ``pass``, ``...`` or a raise of ``NotImplementedError``, or any function
    whose body only raises it (``pass`` alone is no declaration: a hook may do nothing on
    purpose)."""
    body = node.body[1:] if node.body and _is_constant(node.body[0], str) else node.body
    if any(
        (d.id if isinstance(d, ast.Name) else getattr(d, "attr", None)) == "abstractmethod"
        for d in node.decorator_list
    ):
        return not body or _declares_only(node)
    return _declares_only(node) and isinstance(body[0], ast.Raise)


def _ellipsis_body(node: ast.AST) -> bool:
    """A body of ``...`` alone, after a docstring if any."""
    body = list(getattr(node, "body", ()))
    if body and _is_constant(body[0], str):
        body = body[1:]
    return len(body) == 1 and _is_constant(body[0], type(...))


def _is_constant(statement: ast.stmt, kind: type) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, kind)
    )
