"""A pytest fixture parameter's value, found by pytest's own lookup rules, for
``syntax_resolve.py``: ``def test_x(staff_api_client): staff_api_client.post_graphql(...)``.

pytest gives a test (a ``test*`` function of a ``test_*.py`` / ``*_test.py`` file, at module
level or in a ``Test*`` class) or a fixture the fixture of the parameter's name that is
closest: the test's class, its module, the ``conftest.py`` files from its directory up to
the root, then the plugin modules named by ``pytest_plugins`` (and theirs). The value is
certain when that fixture is one ``def`` of the root whose return annotation is a root class,
or whose every ``return`` (``yield`` for a generator) builds the same root class:
``return ApiClient(user=staff_user)``. No answer when the name is parametrized
(``parametrize``, ``pytestmark``, a ``pytest_generate_tests`` hook), when two plugin
modules define it, when a fixture is registered under it with ``name=``, or when it is not
found in the root (a plugin installed outside it, such as ``pytest-django``'s ``db``).
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import PurePosixPath

import msgspec

from cq.semantic.scopes import FUNCTIONS, decorator_names, dotted, returned_values
from cq.semantic.values import DefValue, InstanceValue, Module, Resolver, Value

_MAX_PLUGINS = 200  # plugin modules read per lookup; saleor names 24 (hand-set bound)


class Param(msgspec.Struct, frozen=True):
    """Parameter ``name`` of ``function``; ``scope`` the nodes enclosing the function."""

    function: ast.AST
    name: str
    scope: tuple[ast.AST, ...]


class _Ambiguous(Exception):
    """The lookup cannot be certain: no answer."""


def fixture_value(resolver: Resolver, mod: Module, param: Param, depth: int) -> Value | None:
    if not _requests_fixtures(mod.file, param) or _parametrized(mod, param):
        return None
    try:
        found = _find(resolver, mod, param)
    except _Ambiguous:
        return None
    if found is None:
        return None
    file, node, scope = found
    return _value(resolver, file, node, scope, depth)


def is_fixture(node: ast.AST) -> bool:
    return isinstance(node, FUNCTIONS) and any(
        d == "fixture" or d.endswith(".fixture") for d in decorator_names(node)
    )


def _requests_fixtures(file: str, param: Param) -> bool:
    function = param.function
    if not isinstance(function, FUNCTIONS):
        return False
    if is_fixture(function):
        return function.name != param.name  # a fixture overriding itself asks the outer one
    base = PurePosixPath(file).name
    test_file = base.startswith("test_") or base.endswith("_test.py")
    in_place = not param.scope or (
        len(param.scope) == 1
        and isinstance(param.scope[0], ast.ClassDef)
        and param.scope[0].name.startswith("Test")
    )
    return test_file and in_place and function.name.startswith("test")


def _parametrized(mod: Module, param: Param) -> bool:
    if "pytest_generate_tests" in mod.body.names:
        return True
    marks = mod.body.names.get("pytestmark", [])
    if any("parametrize" in ast.unparse(b.statement) for b in marks):
        return True
    for node in (param.function, *param.scope):
        for decorator in getattr(node, "decorator_list", []):
            if not isinstance(decorator, ast.Call) or not decorator.args:
                continue
            if not (dotted(decorator.func) or "").endswith("parametrize"):
                continue
            try:
                names = ast.literal_eval(decorator.args[0])
            except ValueError:
                return True
            listed = names.split(",") if isinstance(names, str) else names
            if param.name in [str(n).strip() for n in listed]:
                return True
    return False


def _find(
    resolver: Resolver, mod: Module, param: Param
) -> tuple[str, ast.AST, tuple[ast.AST, ...]] | None:
    name = param.name
    if param.scope and isinstance(param.scope[-1], ast.ClassDef):
        cls = param.scope[-1]
        bound = resolver.class_body(cls).names.get(name, [])
        if bound and is_fixture(bound[-1].node):
            if any(b.branch for b in bound):
                raise _Ambiguous
            return mod.file, bound[-1].node, param.scope
    found = _in_module(resolver, mod.file, name)
    if found is not None:
        return found
    conftests = _conftests(resolver, mod.file)
    for conftest in conftests:
        found = _in_module(resolver, conftest, name)
        if found is not None:
            return found
    key = ("plugins", mod.file if "pytest_plugins" in mod.body.names else "", *conftests, name)
    if key not in resolver.memo:
        try:
            resolver.memo[key] = _in_plugins(resolver, [mod.file, *conftests], name)
        except _Ambiguous as exc:
            resolver.memo[key] = exc
    found = resolver.memo[key]
    if isinstance(found, _Ambiguous):
        raise found
    return found  # type: ignore[return-value]


def _in_plugins(
    resolver: Resolver, files: list[str], name: str
) -> tuple[str, ast.AST, tuple[ast.AST, ...]] | None:
    plugins = _plugins(resolver, files)
    matches = [f for p in plugins if (f := _in_module(resolver, p, name)) is not None]
    if len({(f[0], getattr(f[1], "lineno", 0)) for f in matches}) > 1:
        raise _Ambiguous
    return matches[0] if matches else None


def _in_module(
    resolver: Resolver, file: str, name: str
) -> tuple[str, ast.AST, tuple[ast.AST, ...]] | None:
    """The fixture ``name`` that module ``file`` holds (defined or imported), if any."""
    if not _may_hold(resolver.text(file), name):
        return None
    mod = resolver.module(file)
    if mod is None:
        return None
    if "pytest_generate_tests" in mod.body.names:
        raise _Ambiguous
    for statement in mod.tree.body:
        for decorator in getattr(statement, "decorator_list", []):
            renamed = [k for k in getattr(decorator, "keywords", []) if k.arg == "name"]
            if renamed and getattr(renamed[0].value, "value", None) == name:
                raise _Ambiguous
    if name not in mod.body.names and not mod.body.stars:
        return None
    value = resolver.module_attr(file, name, 0)
    if isinstance(value, DefValue) and is_fixture(value.node):
        return value.file, value.node, value.scope
    if name in mod.body.names or value is not None:
        raise _Ambiguous  # bound to something that is not a fixture of the root we can read
    return None


def _may_hold(text: str | None, name: str) -> bool:
    """Whether a module's text can hold fixture ``name`` (a ``def`` of it, an import of it, a
    star import, ``name="..."``, a ``pytest_generate_tests`` hook): saleor's 24 plugin modules
    mostly say ``checkout`` somewhere, few define or import a fixture of that name."""
    if text is None:
        return True
    n = re.escape(name)
    return bool(
        re.search(
            rf"\bdef\s+{n}\s*\(|\bimport\s+\([^)]*\b{n}\b|\bimport\s+[^(\n][^\n]*\b{n}\b"
            rf"|\bimport\s+\*|\bname\s*=\s*[\"']{n}[\"']|\bpytest_generate_tests\b",
            text,
        )
    )


def _conftests(resolver: Resolver, file: str) -> list[str]:
    """``conftest.py`` files from ``file``'s directory up to the root, nearest first."""
    out = []
    folder = PurePosixPath(file).parent
    while True:
        rel = (folder / "conftest.py").as_posix().removeprefix("./")
        if rel != file and os.path.isfile(os.path.join(resolver.root, rel)):
            out.append(rel)
        if folder.as_posix() in ("", "."):
            return out
        folder = folder.parent


def _plugins(resolver: Resolver, files: list[str]) -> list[str]:
    """Root files of the modules named by ``pytest_plugins`` in ``files``, and in those."""
    seen: list[str] = []
    queue = list(files)
    while queue and len(seen) < _MAX_PLUGINS:
        mod = resolver.module(queue.pop(0))
        listed = mod.body.names.get("pytest_plugins", []) if mod is not None else []
        if not listed or mod is None:
            continue
        value = getattr(listed[-1].statement, "value", None)
        try:
            names = ast.literal_eval(value) if value is not None else []
        except ValueError:
            raise _Ambiguous from None
        for name in [names] if isinstance(names, str) else names:
            target = resolver.module_file(str(name), mod.file)
            if target is None:
                raise _Ambiguous  # a plugin outside the root (or not found) may define it
            if target not in seen:
                seen.append(target)
                queue.append(target)
    return seen


def _value(
    resolver: Resolver, file: str, node: ast.AST, scope: tuple[ast.AST, ...], depth: int
) -> Value | None:
    """An instance of the root class the fixture's annotation names or its returns build."""
    mod = resolver.module(file)
    if mod is None or not isinstance(node, FUNCTIONS):
        return None
    returns = node.returns
    if isinstance(returns, ast.Name | ast.Attribute):
        kind = resolver.value_of(mod, list(scope), returns, node.lineno, depth + 1)
        if isinstance(kind, DefValue) and isinstance(kind.node, ast.ClassDef):
            return InstanceValue(kind)
    values = returned_values(node)
    if not values or any(v is None for v in values):
        return None
    found = [resolver.value_of(mod, [*scope, node], v, v.lineno, depth + 1) for v in values if v]
    first = found[0]
    if not isinstance(first, InstanceValue) or any(f != first for f in found):
        return None
    return first
