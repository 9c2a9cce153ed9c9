"""The package's layout holds: no import cycle, and imports run one way (a stage uses the base
modules and the public package of an earlier stage, never a later stage; the base modules use
no stage)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import cq

PACKAGE = Path(cq.__file__).parent
# Pipeline order: a stage may import the base and the stages before it.
STAGES = (
    "rewrite",
    "candidates",
    "classify",
    "rank",
    "enrich",
    "semantic",
    "index",
    "assemble",
    "report",
)
BASE = (
    "model",
    "parse",
    "forked",
    "cache",
    "errors",
    "cancel",
    "tools",
    "terminal",
    "rooted",
    "confine",
    "env",
    "profiles",
    "llm_settings",
    "tables",
    "settings",
    "workers",
    "prefork",
)
# What each base module may import of cq: the base modules listed before it.
BASE_ALLOWED = {
    "errors": set(),
    "model": {"errors"},
    "cache": {"forked"},  # a one-shot search's writes stored by a child (cq.cache.handoff)
    "tools": {"errors"},
    "terminal": set(),
    "rooted": set(),
    "confine": {"errors", "model", "rooted"},
    "env": {"errors"},
    "tables": set(),
    "profiles": {"model", "errors", "confine", "env", "tables"},
    "llm_settings": {"errors", "env", "tables"},
    "settings": {"model", "errors", "env", "profiles", "confine", "llm_settings"},
    "workers": set(),
    "forked": set(),
    "prefork": {"forked"},
    "cancel": {"errors"},
    "parse": {"model", "cache", "rooted", "tools"},
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """cq modules ``path`` imports anywhere (functions and ``TYPE_CHECKING`` blocks too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "cq")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "cq":
            module = node.module or ""
            names = {alias.name for alias in node.names}
            # ``from cq.parse import python_syntax``: the submodule (its package is its parent)
            subs = {n for n in names if _is_module(f"{module}.{n}")}
            found.update(f"{module}.{n}" for n in subs)
            if names - subs:
                found.add(module)
    return found


def _is_module(name: str) -> bool:
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


@functools.cache  # the sources do not change during a run; four tests read the graph
def _graph() -> dict[str, frozenset[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: frozenset(_imports(path) & set(modules)) for name, path in modules.items()}


def _unit(module: str) -> str:
    """``cq.classify.engine`` -> ``classify``; top-level modules are their own unit."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "cq"


def test_no_module_imports_itself_back() -> None:
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    assert cycles == []


def test_imports_run_one_way() -> None:
    wrong: list[str] = []
    for module, targets in _graph().items():
        unit = _unit(module)
        for target in targets:
            other = _unit(target)
            if other == unit:
                continue
            if unit in STAGES:
                earlier = STAGES[: STAGES.index(unit)]
                if other not in BASE and other not in earlier:
                    wrong.append(f"{module} -> {target}")
                elif other in earlier and target != f"cq.{other}":  # only its public face
                    wrong.append(f"{module} -> {target} (a private module)")
            elif unit in BASE and other not in BASE_ALLOWED[unit]:
                wrong.append(f"{module} -> {target}")
    assert wrong == []


def test_only_the_entry_point_imports_the_cli() -> None:
    """The CLI is the top: the server's search process runs a search through ``cq.search``
    (the command line a search shares with the CLI), never the CLI's own module."""
    wrong = sorted(
        f"{module} -> {target}"
        for module, targets in _graph().items()
        if module != "cq.__main__" and not _is_cli(module)
        for target in targets
        if _is_cli(target)
    )
    assert wrong == []


def _is_cli(module: str) -> bool:
    return module == "cq.cli" or module.startswith(("cq.cli.", "cq.cli_"))


def test_production_modules_carry_no_test_hook() -> None:
    """A test that must interfere with a run installs its hook from ``tests/hooked_cq.py``;
    no module of cq reads a test-only setting or names that script."""
    carrying = [
        _module_name(path)
        for path in PACKAGE.rglob("*.py")
        if any(mark in path.read_text(encoding="utf-8") for mark in ("CQ_TEST", "hooked_cq"))
    ]
    assert carrying == []


# What the report may import: it renders a finished result (the data types and the terminal's
# safe text), so every decision it prints was made before it, in ``cq.assemble``.
REPORT_ALLOWED = {"model", "terminal", "report"}


def test_report_imports_only_the_model_and_the_terminal() -> None:
    wrong = sorted(
        f"{module} -> {target}"
        for module, targets in _graph().items()
        if _unit(module) == "report"
        for target in targets
        if _unit(target) not in REPORT_ALLOWED
    )
    assert wrong == []
