"""What ``syntax_resolve.py`` knows an expression to be: a ``def`` or ``class`` of the root, a
root module, an instance of a root class, or ``super()`` in a method of one; and
``Resolver``, what ``classes.py`` and ``fixtures.py`` ask of the resolver (so they need not
import it back).
"""

from __future__ import annotations

import ast
from typing import Protocol

import msgspec

from cq.semantic.scopes import BodyBindings


class Module(msgspec.Struct, frozen=True):
    file: str  # relative to the root
    tree: ast.Module
    lines: list[str]
    body: BodyBindings


class DefValue(msgspec.Struct, frozen=True):
    """A ``def`` or ``class`` of the root; ``scope`` the nodes enclosing it."""

    file: str
    node: ast.AST
    scope: tuple[ast.AST, ...] = ()


class ModuleValue(msgspec.Struct, frozen=True):
    file: str


class InstanceValue(msgspec.Struct, frozen=True):
    cls: DefValue


class SuperValue(msgspec.Struct, frozen=True):
    cls: DefValue


Value = DefValue | ModuleValue | InstanceValue | SuperValue


def key(cls: DefValue) -> tuple[str, int, int]:
    """A class's identity across lookups: its file and where its ``class`` starts."""
    return (cls.file, getattr(cls.node, "lineno", 0), getattr(cls.node, "col_offset", 0))


class Resolver(Protocol):
    """The part of ``syntax_resolve.SyntaxResolver`` the helper modules use."""

    root: str
    mros: dict[tuple[str, int, int], list[DefValue | str] | None]
    memo: dict[tuple[str, ...], object]

    def module(self, rel: str) -> Module | None: ...

    def class_body(self, node: ast.ClassDef) -> BodyBindings: ...

    def text(self, file: str) -> str | None: ...

    def may_bind(self, file: str, name: str) -> bool: ...

    def module_file(self, name: str, importer: str) -> str | None: ...

    def module_attr(
        self, file: str, name: str, depth: int, before: int | None = None
    ) -> Value | None: ...

    def value_of(
        self, mod: Module, stack: list[ast.AST], expr: ast.AST, line: int, depth: int
    ) -> Value | None: ...
