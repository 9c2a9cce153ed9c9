"""A method call nobody could type, read by its name: ``via: unique-name``.

Pyrefly leaves ``x.m(...)`` unresolved when it has no type for ``x`` (a Django ORM value, an
untyped parameter, a fixture of unknown value), and cq's syntax fallback says nothing when it
cannot follow ``x`` either. If then exactly one ``def m`` exists in the root, as a method of a
class (not a property), no other line of the root binds ``m`` (``m = ...``, ``self.m = ...``,
``m: T``, a keyword ``m=``), ``m`` is no attribute of a builtin type, ``x`` is not imported
from a module outside the root, and no module Pyrefly reads outside the root defines ``m``
(typeshed's stdlib, which Pyrefly bundles: the copy the ``typeshed-client`` package ships, a
5 MB wheel of stubs kept by typeshed's maintainers, since Pyrefly's own copy is unpacked only
when it needs a path into it; and the active virtualenv's site-packages), that method is the
only thing in sight the call can reach. It is a weaker reading than Pyrefly's or the syntax
fallback's: the stage takes it only for an attribute call Pyrefly typed ``Unknown`` and the
syntax fallback could not follow, and marks it ``via: unique-name`` so the report and the JSON
say so. Not checked: packages installed outside a virtualenv (the interpreter's own
site-packages, 685 MB here: too much to read per search).

Precision, measured by applying the rule to every shown attribute callsite Pyrefly did resolve
and comparing (``python -m bench.semantic_cost --resolution-only``):
bench/results/2026-11-27-bench-log.md, "Unique-name reading".
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import re
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from cq.model import Scope, SemanticDefinition
from cq.semantic.scopes import FUNCTIONS, decorator_names
from cq.tools import find_rg, rg_types

_TIMEOUT_S = 30.0
_PY = rg_types("python")


def _builtin_attributes() -> frozenset[str]:
    """Attribute names of the builtin types (``list.append``, ``dict.get``, ``str.join``):
    an ``Unknown`` receiver may well be one of them."""
    names: set[str] = set()
    for value in vars(builtins).values():
        if isinstance(value, type):
            names.update(dir(value))
    return frozenset(names)


_BUILTIN = _builtin_attributes()


class UniqueNames:
    """The root's one method of a name, per search (answers memoized by name). ``prefetch`` starts
    the rg runs for the names a search will ask about, so they overlap the syntax reading
    (serial runs took half a one-shot budget:
    bench/results/2026-11-29-figures-from-cq.md)."""

    def __init__(self, scope: Scope, venv: str | None = None) -> None:
        self.scope = scope  # the files it reads: the search's (hidden, ignored, excluded)
        self.root = scope.root  # its real path (``cq.settings.settle``)
        self.venv = venv  # the active virtualenv (``SemanticSettings.venv``)
        self._lock = threading.Lock()
        self._runs: dict[tuple[str, str], subprocess.Popen[bytes] | None] = {}
        self._in_root: dict[str, tuple[str, int] | None] = {}
        self._outside: dict[str, bool] = {}

    def prefetch(self, names: set[str]) -> None:
        for name in sorted(names):
            if _eligible(name):
                self._start("root", name)
                self._start("outside", name)

    def in_root(self, name: str) -> tuple[str, int] | None:
        """(file, line) of the one ``def name`` of the root when nothing else there binds
        ``name``; None otherwise (also for dunders and names of builtin types)."""
        with self._lock:
            if name in self._in_root:
                return self._in_root[name]
        found = None
        if _eligible(name):
            lines = self._lines("root", name)
            found = _one_def(name, lines) if lines is not None else None
        with self._lock:
            self._in_root[name] = found
        return found

    def defined_outside(self, name: str, deadline: float | None = None) -> bool | None:
        """Whether a module Pyrefly reads outside the root defines ``name`` (True when that
        cannot be checked: the answer must then not be given); None when its rg run did not
        end by ``deadline`` (``time.monotonic``; asked again on the next call)."""
        with self._lock:
            if name in self._outside:
                return self._outside[name]
        timeout = _TIMEOUT_S if deadline is None else max(deadline - time.monotonic(), 0.0)
        try:
            lines = self._lines("outside", name, timeout)
        except subprocess.TimeoutExpired:
            return None
        found = lines is None or bool(lines)
        with self._lock:
            self._outside[name] = found
        return found

    def _start(self, kind: str, name: str) -> subprocess.Popen[bytes] | None:
        with self._lock:
            if (kind, name) in self._runs:
                return self._runs[(kind, name)]
            argv = self._root_argv(name) if kind == "root" else self._outside_argv(name)
            try:
                run = (
                    subprocess.Popen(
                        argv,
                        cwd=self.root if kind == "root" else None,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                    )
                    if argv
                    else None
                )
            except OSError:
                run = None
            self._runs[(kind, name)] = run
            return run

    def _lines(self, kind: str, name: str, timeout: float = _TIMEOUT_S) -> list[str] | None:
        """rg's output lines for ``name``; None when rg could not run or failed; raises
        ``subprocess.TimeoutExpired`` when it did not end within ``timeout`` (still running:
        a later call waits on)."""
        run = self._start(kind, name)
        if run is None:
            return None
        try:
            out, _ = run.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            if timeout >= _TIMEOUT_S:
                run.kill()
                return None
            raise
        except (subprocess.SubprocessError, OSError, ValueError):
            run.kill()
            return None
        if run.returncode not in (0, 1):
            return None
        text = out.decode("utf-8", errors="surrogateescape")  # "\n" only: see rg's -n
        return [line for line in text.split("\n") if line]

    def candidate(
        self, name: str, parsed: Callable[[str], tuple[ast.Module, list[str]] | None]
    ) -> SemanticDefinition | None:
        """The one ``def name`` of the root when it is a method of a class (not a property),
        ``parsed`` giving a root file's parse and lines; the outside check is apart
        (``defined_outside``)."""
        found = self.in_root(name)
        module = parsed(found[0]) if found is not None else None
        if found is None or module is None:
            return None
        file, line = found
        tree, lines = module
        if _method_at(tree, line, name) is None:
            return None
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        at = re.search(rf"\bdef\s+({re.escape(name)})\b", text)
        return SemanticDefinition(
            file=file, line=line, col=at.start(1) if at else 0, via="unique-name"
        )

    def _root_argv(self, name: str) -> list[str]:
        """Every line of the root that defines or binds ``name``: a ``def``, an assignment
        (``m = ...``, ``self.m = ...``, also a keyword ``m=...``: abstaining is safe) or an
        annotation (``m: T``)."""
        word = re.escape(name)
        patterns = (
            rf"^\s*(?:async\s+)?def\s+{word}\b",
            rf"\b{word}\s*(?::[^=\n]*)?=(?:[^=]|$)",
            rf"^\s*{word}\s*:",
        )
        argv = [find_rg(), "--no-config", "-n", "--no-heading", "-H", *_PY]
        if self.scope.hidden:
            argv.append("--hidden")
        if self.scope.no_ignore:
            argv.append("--no-ignore")
        for glob in self.scope.exclude:
            argv += ["--glob", "!" + glob]
        for pattern in patterns:
            argv += ["-e", pattern]
        return [*argv, "--", "."]

    def _outside_argv(self, name: str) -> list[str] | None:
        places = self._outside_places()
        if not places:
            return None  # no typeshed to check against: say nothing
        pattern = rf"^\s*(?:async\s+)?def\s+{re.escape(name)}\b"
        argv = [find_rg(), "--no-config", "-l", "--no-ignore", "--hidden", *_PY, "-e", pattern]
        return [*argv, "--", *places]

    def _outside_places(self) -> list[str]:
        """typeshed's stdlib stubs (what Pyrefly bundles, as ``typeshed-client`` ships them)
        and the active virtualenv's site-packages, those not inside the root."""
        spec = importlib.util.find_spec("typeshed_client")
        found = (
            [Path(p) / "typeshed" for p in (spec.submodule_search_locations or [])] if spec else []
        )
        places = [p for p in found if p.is_dir()]
        if not places:
            return []
        if self.venv:
            places += sorted(Path(self.venv).glob("lib/python*/site-packages"))
        root = Path(self.root)
        return [str(p) for p in places if not p.resolve().is_relative_to(root)]


def _method_at(tree: ast.Module, line: int, name: str) -> ast.AST | None:
    """The ``def name`` at ``line`` when it is a method of a class (directly in its body)
    and no property or cached property."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if isinstance(item, FUNCTIONS) and item.name == name and item.lineno == line:
                decorators = decorator_names(item)
                if any(d.split(".")[-1].endswith("property") for d in decorators):
                    return None
                return item
    return None


def _eligible(name: str) -> bool:
    return name.isidentifier() and not name.startswith("__") and name not in _BUILTIN


def _one_def(name: str, lines: list[str]) -> tuple[str, int] | None:
    """(file, line) of the only line of rg's ``file:line:text`` output when it is a ``def``
    of ``name`` (any other binding, or a second def, leaves the name ambiguous)."""
    if len(lines) != 1:
        return None
    file, _, rest = lines[0].partition(":")
    number, _, text = rest.partition(":")
    if not number.isdigit() or not re.match(rf"\s*(?:async\s+)?def\s+{re.escape(name)}\b", text):
        return None
    return file.removeprefix("./"), int(number)


__all__ = ["UniqueNames"]
