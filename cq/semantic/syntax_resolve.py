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
make it say nothing. It never guesses by name ("the only def of that name": that weaker
reading is ``unique_name.py``'s, marked ``via: unique-name``; ``opaque_method`` tells it which
receivers this reading could not follow), and never overrides Pyrefly: the stage asks it only
for callsites Pyrefly left without a definition, and marks what it answers ``via: syntax``.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable
from pathlib import PurePosixPath

from cq.model import Finding, SemanticDefinition
from cq.parse import SourceFile, py_ast
from cq.parse.trees import Lru
from cq.semantic import fixtures
from cq.semantic.classes import MAX_DEPTH, class_attr
from cq.semantic.scopes import (
    FUNCTIONS,
    Binding,
    BodyBindings,
    annotation_of,
    body_bindings,
    call_at,
    decorator_names,
    function_bindings,
    method_owner,
    single_assignment,
)
from cq.semantic.values import (
    DefValue,
    InstanceValue,
    Module,
    ModuleValue,
    SuperValue,
    Value,
)

# Modules parsed for the fallback, by content: one saleor fixture lookup reads 62 files (19,000
# lines, 0.75 s of ``ast.parse`` at load 15); py_ast's own LRU keeps 64 for every stage.
_PARSED = Lru(160, "syntax_modules")
_GLOBAL = re.compile(r"^\s*global\s", re.M)
STAR_IMPORT = re.compile(r"\bimport\s+\*")


def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"\b{re.escape(name)}\b")


class SyntaxResolver:
    """Resolves callsites of one search; files come from ``source`` (the search's corpus)."""

    def __init__(self, root: str, source: Callable[[str], SourceFile | None]) -> None:
        self.root = root
        self._source = source
        self._modules: dict[str, Module | None] = {}
        self._bodies: dict[int, BodyBindings] = {}
        self.mros: dict[tuple[str, int, int], list[DefValue | str] | None] = {}  # classes.py
        self._files: dict[tuple[str, str], str | None] = {}
        self.memo: dict[tuple[str, ...], object] = {}  # fixtures.py's lookups, per search

    def resolve(self, finding: Finding) -> SemanticDefinition | None:
        """The ``def``/``class`` a callsite calls, when it is certain; else None."""
        return self.read(finding)[0]

    def read(self, finding: Finding) -> tuple[SemanticDefinition | None, str | None]:
        """``resolve``'s answer, and, when there is none for a call ``x.m(...)`` whose
        receiver ``x`` this reading cannot follow at all, the name ``m`` (``unique_name.py``
        may then read it by name; not for a receiver imported from a module outside the root,
        nor for a root class whose methods lack ``m``)."""
        located = self._call(finding)
        if located is None:
            return None, None
        mod, func, stack = located
        if not isinstance(func, ast.Attribute):
            value = self.value_of(mod, stack, func, finding.line, 0)
            return (self._definition(value) if isinstance(value, DefValue) else None), None
        receiver = self.value_of(mod, stack, func.value, finding.line, 1)
        if receiver is None:
            opaque = not self._imported_from_outside(mod, func.value)
            return None, func.attr if opaque else None
        value = self.attribute(receiver, func.attr, 0)
        return (self._definition(value) if isinstance(value, DefValue) else None), None

    def _imported_from_outside(self, mod: Module, expr: ast.AST) -> bool:
        """Whether the leftmost name of ``expr`` is imported at module level from a module
        that is not in the root."""
        while isinstance(expr, (ast.Attribute, ast.Call, ast.Subscript)):
            expr = expr.func if isinstance(expr, ast.Call) else expr.value
        if not isinstance(expr, ast.Name):
            return False
        for binding in mod.body.names.get(expr.id, []):
            node, statement = binding.node, binding.statement
            if binding.kind == "import" and isinstance(node, ast.alias):
                target = self.module_file(node.name.split(".")[0], mod.file)
            elif binding.kind == "from" and isinstance(statement, ast.ImportFrom):
                target = self.from_module(mod.file, statement)
            else:
                continue
            if target is None:
                return True
        return False

    def parsed(self, rel: str) -> tuple[ast.Module, list[str]] | None:
        mod = self.module(rel)
        return (mod.tree, mod.lines) if mod is not None else None

    def _call(self, finding: Finding) -> tuple[Module, ast.AST, list[ast.AST]] | None:
        if finding.category != "callsite" or finding.language != "python":
            return None
        mod = self.module(finding.file)
        if mod is None or not 0 < finding.line <= len(mod.lines):
            return None
        name = finding.text.rsplit(".", 1)[-1]
        text = mod.lines[finding.line - 1]
        char = finding.col + finding.text.rfind(".") + 1
        start = len(text[:char].encode("utf-8"))
        located = call_at(mod.tree, finding.line, start, name)
        if located is None:
            return None
        func, stack = located
        return mod, func, stack

    # -- files and modules -------------------------------------------------------------------

    def module(self, rel: str) -> Module | None:
        if rel not in self._modules:
            self._modules[rel] = self._load(rel)
        return self._modules[rel]

    def _load(self, rel: str) -> Module | None:
        """The file's parse and top-level bindings, kept by content across searches (``cq
        mcp``): a fixture lookup reads the same conftest and plugin modules every time."""
        source = self._source(rel)
        if source is None or source.text is None:
            return None
        key = f"{source.digest}:{rel}"
        known = _PARSED.get(key)
        if known is not None:
            return known
        try:
            tree = py_ast(source)
        except (SyntaxError, ValueError):
            return None
        lines = source.lines() or []
        body = body_bindings(tree.body, may_declare_global=bool(_GLOBAL.search(source.text)))
        module = Module(file=rel, tree=tree, lines=lines, body=body)
        _PARSED.put(key, module)
        return module

    def text(self, file: str) -> str | None:
        source = self._source(file)
        return source.text if source is not None else None

    def may_bind(self, file: str, name: str) -> bool:
        """Whether ``file`` can bind ``name`` at all (its text has the word, or it star-imports):
        most modules a star import names are ruled out without a parse."""
        text = self.text(file)
        return text is None or bool(STAR_IMPORT.search(text) or _word(name).search(text))

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
                call = single_assignment(node, name)
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
                owner = method_owner(stack)
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
        annotation = annotation_of(function, param.name)
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
            return class_attr(self, base, name, instance=False, after=None)
        if isinstance(base, InstanceValue):
            return class_attr(self, base.cls, name, instance=True, after=None)
        if isinstance(base, SuperValue):
            return class_attr(self, base.cls, name, instance=True, after=base.cls)
        return None

    # -- classes -----------------------------------------------------------------------------

    def _definition(self, value: DefValue) -> SemanticDefinition | None:
        node = value.node
        mod = self.module(value.file)
        if mod is None or not isinstance(node, (*FUNCTIONS, ast.ClassDef)):
            return None
        text = mod.lines[node.lineno - 1]
        found = re.search(rf"\b(?:def|class)\s+({re.escape(node.name)})\b", text)
        col = found.start(1) if found else 0
        return SemanticDefinition(file=value.file, line=node.lineno, col=col, via="syntax")
