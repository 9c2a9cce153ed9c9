"""Stage 2, Python ``ast``: behaviour of the function the hit defines.

In: the source of the ``def`` (``facts_of_def``, cheap: only that function is parsed) or the
file's ``ast`` module (``function_facts``), the hit's 1-based line and text. Out:
``FunctionFacts`` when the hit is the name of a ``def``/``async def`` on that line, else None.
Nested functions, lambdas and classes are not counted: their awaits and yields are theirs.
"""

from __future__ import annotations

import ast

from cq.model import FunctionFacts
from cq.parse.python_syntax import AST_FUNCTIONS, scope_nodes


def facts_of_def(def_text: str, col: int, name: str) -> FunctionFacts | None:
    """Facts of the function whose ``def`` source (from its first keyword) starts at ``col``.

    An indented ``def`` is parsed under ``if 1:``, which accepts any indentation deeper than
    its own; lines that look less indented sit inside strings or brackets. None when the
    segment does not parse alone (the caller then parses the whole file).
    """
    segment = f"if 1:\n{' ' * col}{def_text}" if col else def_text
    try:
        tree = ast.parse(segment)
    except (SyntaxError, ValueError):
        return None
    return function_facts(tree, 2 if col else 1, name)


def function_facts(tree: ast.Module, line: int, name: str) -> FunctionFacts | None:
    func = _function_at(tree, line, name)
    if func is None:
        return None
    awaits = yields = 0
    returns_value = False
    # ``-> None`` declares that a caller gets nothing, whatever a ``return`` passes along
    # (``return self._fire(name)`` of a helper returning None): the report must not say
    # "returns a value" beside its own ``-> None``
    declared_none = _is_none_annotation(getattr(func, "returns", None))
    for node in scope_nodes(list(getattr(func, "body", []))):
        if isinstance(node, ast.Await):
            awaits += 1
        elif isinstance(node, ast.Yield | ast.YieldFrom):
            yields += 1
        elif isinstance(node, ast.Return) and not _is_none(node.value) and not declared_none:
            returns_value = True
    return FunctionFacts(
        is_async=isinstance(func, ast.AsyncFunctionDef),
        is_generator=yields > 0,
        awaits=awaits,
        yields=yields,
        returns_value=returns_value,
    )


def _is_none_annotation(annotation: ast.expr | None) -> bool:
    """``-> None`` (also as the string ``"None"`` of postponed annotations)."""
    if not isinstance(annotation, ast.Constant):
        return False
    return annotation.value is None or annotation.value == "None"


def _function_at(tree: ast.Module, line: int, name: str) -> ast.AST | None:
    """Descend through the statements whose line span holds ``line``."""
    body: list[ast.stmt] = tree.body
    while body:
        holder = next((s for s in body if s.lineno <= line <= (s.end_lineno or s.lineno)), None)
        if holder is None:
            return None
        if isinstance(holder, AST_FUNCTIONS) and holder.lineno == line and holder.name == name:
            return holder
        body = [s for block in _blocks(holder) for s in block if isinstance(s, ast.stmt)]
    return None


def _blocks(stmt: ast.stmt) -> list[list[ast.AST]]:
    blocks = [getattr(stmt, f, None) for f in ("body", "orelse", "finalbody")]
    out = [b for b in blocks if isinstance(b, list)]
    for group in ("handlers", "cases"):
        out.extend(h.body for h in getattr(stmt, group, ()) or ())
    return out


def _is_none(value: ast.expr | None) -> bool:
    return value is None or (isinstance(value, ast.Constant) and value.value is None)
