"""Classes of the root, for ``syntax_resolve.py``: their C3 order and where a name is found
along it. A base class outside the root is opaque: nothing past it is certain (it may define
the name), so a lookup that reaches it has no answer; the order of the root's classes before
it is exact (an outside class's own bases are never the root's).
"""

from __future__ import annotations

import ast

from cq.semantic.scopes import decorator_names, dotted, in_function
from cq.semantic.values import DefValue, Resolver, Value, key

MAX_DEPTH = 12  # base-class chains followed; deeper ones give no answer (hand-set)
_PROPERTIES = ("property", ".setter", ".getter", ".deleter")  # a call of it calls its value


def class_attr(
    resolver: Resolver, cls: DefValue, name: str, instance: bool, after: DefValue | None
) -> Value | None:
    """``name`` looked up along ``cls``'s C3 order (past ``after`` for ``super()``); None
    when a class outside the root comes first, or the binding is not a plain method or
    class (a property, an assignment, a branch), or (``instance``) an instance attribute
    of that name is set in one of the classes."""
    order = mro(resolver, cls, 0)
    if order is None:
        return None
    if after is not None:
        keys = [key(c) if isinstance(c, DefValue) else c for c in order]
        if key(after) not in keys:
            return None
        order = order[keys.index(key(after)) + 1 :]
    for entry in order:
        if not isinstance(entry, DefValue):
            return None  # a class outside the root: it may define ``name``
        assert isinstance(entry.node, ast.ClassDef)
        if instance and sets_instance_attribute(entry.node, name):
            return None
        bound = resolver.class_body(entry.node).names.get(name)
        if not bound:
            continue
        last = bound[-1]
        if any(b.branch for b in bound) or last.kind not in ("def", "class"):
            return None
        if any(d.endswith(_PROPERTIES) for d in decorator_names(last.node)):
            return None
        return DefValue(entry.file, last.node, (*entry.scope, entry.node))
    return None


def mro(resolver: Resolver, cls: DefValue, depth: int) -> list[DefValue | str] | None:
    """C3 linearization of a root class; a base outside the root stands as an opaque
    ``str`` (nothing after it is certain); None when it cannot be computed."""
    own = key(cls)
    if own in resolver.mros:
        return resolver.mros[own]
    resolver.mros[own] = None  # a cycle gives up
    node = cls.node
    assert isinstance(node, ast.ClassDef)
    mod = resolver.module(cls.file)
    bases: list[DefValue | str] = []
    for base in node.bases:
        expr = base.value if isinstance(base, ast.Subscript) else base
        if dotted(expr) == "object":
            continue
        value = None
        if mod is not None and depth < MAX_DEPTH and not in_function(cls.scope):
            value = resolver.value_of(mod, list(cls.scope), expr, node.lineno, depth + 1)
        if isinstance(value, DefValue) and isinstance(value.node, ast.ClassDef):
            bases.append(value)
        else:
            bases.append(f"{cls.file}:{node.lineno}:{ast.unparse(expr)}")
    sequences: list[list[DefValue | str]] = []
    for base in bases:
        if isinstance(base, DefValue):
            inner = mro(resolver, base, depth + 1)
            if inner is None:
                return None
            sequences.append(list(inner))
        else:
            sequences.append([base])
    merged = merge([*sequences, list(bases)])
    result = None if merged is None else [cls, *merged]
    resolver.mros[own] = result
    return result


def merge(sequences: list[list[DefValue | str]]) -> list[DefValue | str] | None:
    """C3 merge (Python's method resolution order); None when inconsistent."""

    def ident(entry: DefValue | str) -> object:
        return key(entry) if isinstance(entry, DefValue) else entry

    seqs = [list(s) for s in sequences if s]
    out: list[DefValue | str] = []
    while seqs:
        for seq in seqs:
            head = ident(seq[0])
            if not any(head in [ident(e) for e in s[1:]] for s in seqs):
                break
        else:
            return None
        chosen = seq[0]
        out.append(chosen)
        seqs = [s[1:] if ident(s[0]) == ident(chosen) else s for s in seqs]
        seqs = [s for s in seqs if s]
    return out


def sets_instance_attribute(node: ast.ClassDef, name: str) -> bool:
    return any(
        isinstance(n, ast.Attribute) and n.attr == name and isinstance(n.ctx, ast.Store)
        for n in ast.walk(node)
    )
