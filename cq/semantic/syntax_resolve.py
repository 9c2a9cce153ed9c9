"""Where a callsite's name is defined, read from the root's source when Pyrefly has no answer.

Pyrefly leaves a call unresolved when it has no type for the receiver: a pytest fixture
parameter (``staff_api_client.post_graphql(...)``), a class whose base it cannot import.
``SyntaxResolver.resolve`` follows the call the way Python would, through ``ast``:
a bare name through the enclosing function scopes to the module's own ``def``/``class`` or
its ``from ... import`` (followed into root modules, star imports included); ``mod.f()``
through an imported root module; ``self.m()``, ``cls.m()``, ``super().m()``, ``C.m()``,
``C().m()``, ``x.m()`` after ``x = C(...)`` or with ``x: C``, and a pytest fixture
parameter whose fixture returns ``C(...)`` (``fixtures.py``) through the C3 order of C's
classes in the root. It answers only when the result is certain: a name bound in a branch
or twice in a function, a base class outside the root before the method is found, a
``property``, an instance attribute of the same name, or an import it cannot find all
make it say nothing. It never guesses by name ("the only def of that name"), and never
overrides Pyrefly: the stage asks it only for callsites Pyrefly left without a definition,
and marks what it answers ``via: syntax``.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable
from pathlib import PurePosixPath

import msgspec

from cq.model import Finding, SemanticDefinition
from cq.parse import SourceFile, py_ast
from cq.semantic import fixtures
from cq.semantic.scopes import (
    FUNCTIONS,
    SCOPES,
    Binding,
    BodyBindings,
    body_bindings,
    decorator_names,
    dotted,
    function_bindings,
)

MAX_DEPTH = 12  # import and base-class chains followed; deeper ones give no answer (hand-set)
_PROPERTIES = ("property", ".setter", ".getter", ".deleter")  # a call of it calls its value
_GLOBAL = re.compile(r"^\s*global\s", re.M)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_OUTER_FIELDS = ("decorator_list", "args", "returns", "bases", "keywords", "type_params")


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


class SyntaxResolver:
    """Resolves callsites of one search; files come from ``source`` (the search's corpus)."""

    def __init__(self, root: str, source: Callable[[str], SourceFile | None]) -> None:
        self.root = root
        self._source = source
        self._modules: dict[str, Module | None] = {}
        self._bodies: dict[int, BodyBindings] = {}
        self._mros: dict[tuple[str, int, int], list[DefValue | str] | None] = {}
        self._files: dict[tuple[str, str], str | None] = {}
        self.memo: dict[tuple[str, ...], object] = {}  # fixtures.py's lookups, per search

    def resolve(self, finding: Finding) -> SemanticDefinition | None:
        """The ``def``/``class`` a callsite calls, when it is certain; else None."""
        if finding.category != "callsite" or finding.language != "python":
            return None
        mod = self.module(finding.file)
        if mod is None or not 0 < finding.line <= len(mod.lines):
            return None
        name = finding.text.rsplit(".", 1)[-1]
        text = mod.lines[finding.line - 1]
        char = finding.col + finding.text.rfind(".") + 1
        start = len(text[:char].encode("utf-8"))
        located = _locate(mod.tree, finding.line, start, name)
        if located is None:
            return None
        func, stack = located
        value = self.value_of(mod, stack, func, finding.line, 0)
        return self._definition(value) if isinstance(value, DefValue) else None

    # -- files and modules -------------------------------------------------------------------

    def module(self, rel: str) -> Module | None:
        if rel not in self._modules:
            self._modules[rel] = self._load(rel)
        return self._modules[rel]

    def _load(self, rel: str) -> Module | None:
        source = self._source(rel)
        if source is None or source.text is None:
            return None
        try:
            tree = py_ast(source)
        except (SyntaxError, ValueError):
            return None
        lines = [line.removesuffix("\r") for line in source.text.split("\n")]
        body = body_bindings(tree.body, may_declare_global=bool(_GLOBAL.search(source.text)))
        return Module(file=rel, tree=tree, lines=lines, body=body)

    def may_bind(self, file: str, name: str) -> bool:
        """Whether ``file`` can bind ``name`` at all (its text names it, or it star-imports):
        most modules a star import or a plugin list names are ruled out without a parse."""
        source = self._source(file)
        text = source.text if source is not None else None
        return text is None or name in text or "*" in text

    def class_body(self, node: ast.ClassDef) -> BodyBindings:
        key = id(node)
        if key not in self._bodies:
            self._bodies[key] = body_bindings(node.body)
        return self._bodies[key]

    def module_file(self, name: str, importer: str) -> str | None:
        """The root file of absolute module ``name`` as imported from ``importer``: searched
        from the root and from the directory above ``importer``'s top package (a ``src/``
        layout); found in both as different files, it is uncertain."""
        found = {f for base in self._import_roots(importer) if (f := self._file_at(base, name))}
        return found.pop() if len(found) == 1 else None

    def from_module(self, importer: str, statement: ast.ImportFrom) -> str | None:
        if statement.level == 0:
            return self.module_file(statement.module or "", importer)
        base = PurePosixPath(importer).parent
        for _ in range(statement.level - 1):
            base = base.parent
        return self._file_at(base.as_posix(), statement.module or "")

    def _import_roots(self, importer: str) -> list[str]:
        top = PurePosixPath(importer).parent
        while top.as_posix() not in ("", ".") and self._isfile(f"{top}/__init__.py"):
            top = top.parent
        return sorted({"", "" if top.as_posix() == "." else top.as_posix()})

    def _file_at(self, base: str, dotted_name: str) -> str | None:
        key = (base, dotted_name)
        if key not in self._files:
            self._files[key] = self._find_file(base, dotted_name)
        return self._files[key]

    def _find_file(self, base: str, dotted_name: str) -> str | None:
        parts = [p for p in dotted_name.split(".") if p]
        stem = "/".join(p for p in (base, *parts) if p and p != ".")
        for candidate in (f"{stem}.py", f"{stem}/__init__.py"):
            if stem and self._isfile(candidate):
                return candidate
        return None

    def _isfile(self, rel: str) -> bool:
        return os.path.isfile(os.path.join(self.root, rel))

    # -- names -------------------------------------------------------------------------------

    def module_attr(
        self, file: str, name: str, depth: int, before: int | None = None
    ) -> Value | None:
        """What module ``file`` binds ``name`` to once imported (``before`` a line: while its
        top level runs), following imports and star imports through the root."""
        mod = self.module(file)
        if mod is None or depth > MAX_DEPTH or name in mod.body.declared_global:
            return None
        bindings = [b for b in mod.body.names.get(name, []) if before is None or b.line < before]
        if any(b.branch for b in bindings):
            return None
        last = bindings[-1] if bindings else None
        for star in reversed([s for s in mod.body.stars if before is None or s.line < before]):
            if last is not None and star.line < last.line:
                break
            assert isinstance(star.statement, ast.ImportFrom)
            target = None if star.branch else self.from_module(file, star.statement)
            if target is None:
                return None
            if self._exports(target, name):
                return self.module_attr(target, name, depth + 1)
        return self.binding_value(file, last, depth) if last is not None else None

    def _exports(self, file: str, name: str) -> bool:
        if not self.may_bind(file, name):
            return False
        mod = self.module(file)
        if mod is None:
            return True  # unknown: the caller gives up on it
        listed = mod.body.names.get("__all__")
        if listed:
            value = getattr(listed[-1].statement, "value", None)
            try:
                names = ast.literal_eval(value) if value is not None else None
            except ValueError:
                return True
            return isinstance(names, list | tuple) and name in names
        return not name.startswith("_") and (name in mod.body.names or bool(mod.body.stars))

    def binding_value(self, file: str, binding: Binding, depth: int) -> Value | None:
        if binding.kind in ("def", "class"):
            return DefValue(file, binding.node)
        node = binding.node
        assert isinstance(node, ast.alias) or binding.kind == "other"
        if binding.kind == "import" and isinstance(node, ast.alias):
            name = node.name if node.asname else node.name.split(".")[0]
            target = self.module_file(name, file)
            return ModuleValue(target) if target else None
        if binding.kind == "from" and isinstance(node, ast.alias):
            assert isinstance(binding.statement, ast.ImportFrom)
            target = self.from_module(file, binding.statement)
            if target is None:
                return None
            mod = self.module(target)
            if mod is not None and (node.name in mod.body.names or mod.body.stars):
                return self.module_attr(target, node.name, depth + 1)
            if target.endswith("__init__.py"):  # ``from pkg import sub``: a submodule
                sub = self._file_at(str(PurePosixPath(target).parent), node.name)
                return ModuleValue(sub) if sub else None
        return None

    def resolve_name(
        self, mod: Module, stack: list[ast.AST], name: str, line: int, depth: int
    ) -> Value | fixtures.Param | None:
        """``name`` as seen at ``line`` inside the scopes ``stack`` (outermost first)."""
        for i in range(len(stack) - 1, -1, -1):
            node = stack[i]
            if isinstance(node, ast.ClassDef):
                if i == len(stack) - 1:  # directly in the class body: its names come first
                    body = self.class_body(node)
                    bound = [b for b in body.names.get(name, []) if b.line < line]
                    if bound:
                        last = bound[-1]
                        return None if last.branch else self.binding_value(mod.file, last, depth)
                continue
            local = function_bindings(node)
            if name in local.declared_global:
                break
            if name in local.declared_nonlocal:
                continue
            defs = local.defs.get(name, [])
            if name in local.parameters:
                if defs or name in local.others:
                    return None
                return fixtures.Param(function=node, name=name, scope=tuple(stack[:i]))
            if defs or name in local.others:
                if len(defs) == 1 and name not in local.others:
                    return DefValue(mod.file, defs[0], tuple(stack[: i + 1]))
                call = _single_assignment(node, name)
                if call is not None and call.lineno < line:
                    return self.value_of(mod, stack[: i + 1], call, call.lineno, depth + 1)
                return None
        in_function = any(isinstance(n, (*FUNCTIONS, ast.Lambda)) for n in stack)
        return self.module_attr(mod.file, name, depth, before=None if in_function else line)

    # -- expressions -------------------------------------------------------------------------

    def value_of(
        self, mod: Module, stack: list[ast.AST], expr: ast.AST, line: int, depth: int
    ) -> Value | None:
        """What ``expr`` evaluates to, as far as the root's source says for certain."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, ast.Name):
            found = self.resolve_name(mod, stack, expr.id, line, depth)
            if isinstance(found, fixtures.Param):
                return self._parameter(mod, stack, found, depth)
            return found
        if isinstance(expr, ast.Attribute):
            base = self.value_of(mod, stack, expr.value, line, depth + 1)
            return self.attribute(base, expr.attr, depth) if base is not None else None
        if isinstance(expr, ast.Call):
            if isinstance(expr.func, ast.Name) and expr.func.id == "super" and not expr.args:
                owner = _method_owner(stack)
                known = self.resolve_name(mod, stack, "super", line, depth)
                if owner is None or known is not None:
                    return None
                return SuperValue(DefValue(mod.file, owner[0], owner[1]))
            callee = self.value_of(mod, stack, expr.func, line, depth + 1)
            if isinstance(callee, DefValue) and isinstance(callee.node, ast.ClassDef):
                return InstanceValue(callee)
        return None

    def _parameter(
        self, mod: Module, stack: list[ast.AST], param: fixtures.Param, depth: int
    ) -> Value | None:
        """A parameter: ``self``/``cls`` of a method, one annotated with a root class, or a
        pytest fixture's value."""
        function = param.function
        owner = param.scope[-1] if param.scope else None
        args = getattr(function, "args", None)
        first = args.posonlyargs + args.args if args is not None else []
        if isinstance(owner, ast.ClassDef) and first and first[0].arg == param.name:
            decorators = decorator_names(function)
            cls = DefValue(mod.file, owner, param.scope[:-1])
            if "staticmethod" in decorators:
                return None
            return cls if "classmethod" in decorators else InstanceValue(cls)
        annotation = _annotation(function, param.name)
        if annotation is not None:
            kind = self.value_of(mod, list(param.scope), annotation, function.lineno, depth + 1)
            if isinstance(kind, DefValue) and isinstance(kind.node, ast.ClassDef):
                return InstanceValue(kind)
            return None
        return fixtures.fixture_value(self, mod, param, depth + 1)

    def attribute(self, base: Value, name: str, depth: int) -> Value | None:
        if isinstance(base, ModuleValue):
            return self.module_attr(base.file, name, depth + 1)
        if isinstance(base, DefValue) and isinstance(base.node, ast.ClassDef):
            return self.class_attr(base, name, instance=False, after=None)
        if isinstance(base, InstanceValue):
            return self.class_attr(base.cls, name, instance=True, after=None)
        if isinstance(base, SuperValue):
            return self.class_attr(base.cls, name, instance=True, after=base.cls)
        return None

    # -- classes -----------------------------------------------------------------------------

    def class_attr(
        self, cls: DefValue, name: str, instance: bool, after: DefValue | None
    ) -> Value | None:
        """``name`` looked up along ``cls``'s C3 order (past ``after`` for ``super()``); None
        when a class outside the root comes first, or the binding is not a plain method or
        class (a property, an assignment, a branch), or (``instance``) an instance attribute
        of that name is set in one of the classes."""
        order = self.mro(cls, 0)
        if order is None:
            return None
        if after is not None:
            keys = [_key(c) if isinstance(c, DefValue) else c for c in order]
            if _key(after) not in keys:
                return None
            order = order[keys.index(_key(after)) + 1 :]
        for entry in order:
            if not isinstance(entry, DefValue):
                return None  # a class outside the root: it may define ``name``
            assert isinstance(entry.node, ast.ClassDef)
            if instance and _sets_instance_attribute(entry.node, name):
                return None
            bound = self.class_body(entry.node).names.get(name)
            if not bound:
                continue
            last = bound[-1]
            if any(b.branch for b in bound) or last.kind not in ("def", "class"):
                return None
            if any(d.endswith(_PROPERTIES) for d in decorator_names(last.node)):
                return None
            return DefValue(entry.file, last.node, (*entry.scope, entry.node))
        return None

    def mro(self, cls: DefValue, depth: int) -> list[DefValue | str] | None:
        """C3 linearization of a root class; a base outside the root stands as an opaque
        ``str`` (nothing after it is certain); None when it cannot be computed."""
        key = _key(cls)
        if key in self._mros:
            return self._mros[key]
        self._mros[key] = None  # a cycle gives up
        node = cls.node
        assert isinstance(node, ast.ClassDef)
        mod = self.module(cls.file)
        bases: list[DefValue | str] = []
        for base in node.bases:
            expr = base.value if isinstance(base, ast.Subscript) else base
            if dotted(expr) == "object":
                continue
            value = None
            if mod is not None and depth < MAX_DEPTH and not _in_function(cls.scope):
                value = self.value_of(mod, list(cls.scope), expr, node.lineno, depth + 1)
            if isinstance(value, DefValue) and isinstance(value.node, ast.ClassDef):
                bases.append(value)
            else:
                bases.append(f"{cls.file}:{node.lineno}:{ast.unparse(expr)}")
        sequences: list[list[DefValue | str]] = []
        for base in bases:
            if isinstance(base, DefValue):
                inner = self.mro(base, depth + 1)
                if inner is None:
                    return None
                sequences.append(list(inner))
            else:
                sequences.append([base])
        merged = _merge([*sequences, list(bases)])
        result = None if merged is None else [cls, *merged]
        self._mros[key] = result
        return result

    def _definition(self, value: DefValue) -> SemanticDefinition | None:
        node = value.node
        mod = self.module(value.file)
        if mod is None or not isinstance(node, (*FUNCTIONS, ast.ClassDef)):
            return None
        text = mod.lines[node.lineno - 1]
        found = re.search(rf"\b(?:def|class)\s+({re.escape(node.name)})\b", text)
        col = found.start(1) if found else 0
        return SemanticDefinition(file=value.file, line=node.lineno, col=col, via="syntax")


def _key(cls: DefValue) -> tuple[str, int, int]:
    return (cls.file, getattr(cls.node, "lineno", 0), getattr(cls.node, "col_offset", 0))


def _merge(sequences: list[list[DefValue | str]]) -> list[DefValue | str] | None:
    """C3 merge (Python's method resolution order); None when inconsistent."""

    def ident(entry: DefValue | str) -> object:
        return _key(entry) if isinstance(entry, DefValue) else entry

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


def _locate(
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


def _single_assignment(function: ast.AST, name: str) -> ast.Call | None:
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


def _annotation(function: ast.AST, name: str) -> ast.expr | None:
    args = getattr(function, "args", None)
    if args is None:
        return None
    for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
        if arg.arg == name and arg.annotation is not None:
            return arg.annotation if isinstance(arg.annotation, ast.Name | ast.Attribute) else None
    return None


def _method_owner(stack: list[ast.AST]) -> tuple[ast.ClassDef, tuple[ast.AST, ...]] | None:
    """The class whose method body the innermost function is (for ``super()``)."""
    for i in range(len(stack) - 1, 0, -1):
        if isinstance(stack[i], FUNCTIONS):
            owner = stack[i - 1]
            return (owner, tuple(stack[: i - 1])) if isinstance(owner, ast.ClassDef) else None
    return None


def _in_function(scope: tuple[ast.AST, ...]) -> bool:
    return any(isinstance(n, (*FUNCTIONS, ast.Lambda)) for n in scope)


def _sets_instance_attribute(node: ast.ClassDef, name: str) -> bool:
    return any(
        isinstance(n, ast.Attribute) and n.attr == name and isinstance(n.ctx, ast.Store)
        for n in ast.walk(node)
    )
