"""Stage 4, LibCST with metadata: qualified names, binding candidates, import alias chain,
and the call's receiver and method.

In: the file's lines and ``ast`` module, the hit's line and character column. Out: the
structural facts LibCST sees (compared in the agreement step, merged only into gaps) and
``ResolutionFacts``. Parses a ``skeleton`` of the file, never the whole file; libcst is
imported by ``cq.parse.cst_metadata`` only when this stage runs.
"""

from __future__ import annotations

import ast
from typing import Any

from cq.enrich.facts import StructuralFacts, squash
from cq.enrich.skeleton import Skeleton, build_skeleton
from cq.enrich.stages import Limited, Skip
from cq.model import Binding, ResolutionFacts
from cq.parse import CstMetadata, cst_metadata
from cq.parse import python_syntax as py
from cq.parse.syntax import parents as walk_up


def libcst_facts(
    lines: list[str], tree: ast.Module, line: int, col: int, max_bytes: int
) -> tuple[StructuralFacts, ResolutionFacts | None]:
    skeleton = build_skeleton(lines, tree, line)
    if skeleton is None:
        raise Skip("no statement at the hit")
    if len(skeleton.text) > max_bytes:
        raise Limited(f"skeleton over {max_bytes // 1024} KiB")
    return skeleton_facts(skeleton, col)


def skeleton_facts(skeleton: Skeleton, col: int) -> tuple[StructuralFacts, ResolutionFacts | None]:
    """The facts of the name at ``skeleton.hit_row``, character column ``col``. A whole
    file given as its own skeleton (every line, mapped to itself) gives the reference the
    skeleton's facts are checked against (``bench.studies.skeleton_agreement``)."""
    import libcst as cst

    meta = cst_metadata(skeleton.text)
    name = _name_at(meta, skeleton.hit_row, col)
    if name is None:
        return StructuralFacts(), None
    parents = meta.parents_of(name)
    chain = walk_up(name, parents.get)
    defined = chain[0] if isinstance(chain[0], cst.FunctionDef | cst.ClassDef) else None
    if defined is not None and defined.name is not name:
        defined = None
    scopes = _enclosing_defs(chain, defined)
    classes = [p for p in scopes if isinstance(p, cst.ClassDef)]
    top, call = _callee(parents, name)
    receiver = method = None
    if call is not None and isinstance(call.func, cst.Attribute):
        receiver, method = _code(meta, call.func.value), call.func.attr.value
    facts = StructuralFacts(
        construct=_construct(chain, defined, call, top, name),
        class_context=classes[0].name.value if classes else None,
        scope_chain=tuple(p.name.value for p in reversed(scopes)),
        call_target=_code(meta, call.func) if call is not None else None,
        call_receiver=receiver,
        call_method=method,
    )
    return facts, _resolution(meta, parents, skeleton, name, top)


def _enclosing_defs(chain: list[Any], defined: Any) -> list[Any]:
    """Defs and classes around the hit, innermost first; a def's decorators are outside it."""
    import libcst as cst

    out = []
    for below, node in zip([None, *chain], chain, strict=False):
        if not isinstance(node, cst.FunctionDef | cst.ClassDef) or node is defined:
            continue
        if not isinstance(below, cst.Decorator):
            out.append(node)
    return out


def _name_at(meta: CstMetadata, row: int, col: int) -> Any:
    import libcst as cst

    for node, where in meta.positions.items():
        if isinstance(node, cst.Name) and where.start.line == row and where.start.column == col:
            return node
    return None


def _callee(parents: dict[Any, Any], name: Any) -> tuple[Any, Any]:
    """The attribute chain ending at the hit, and the call it is the callee of (if any)."""
    import libcst as cst

    top = name
    up = parents.get(top)
    while isinstance(up, cst.Attribute) and up.attr is top:
        top, up = up, parents.get(up)
    call = up if isinstance(up, cst.Call) and up.func is top else None
    return top, call


def _construct(chain: list[Any], defined: Any, call: Any, top: Any, name: Any) -> str:
    """The same construct names as ``py_structure``, read from LibCST's node types."""
    import libcst as cst

    if defined is not None:
        return py.FUNCTION_DEF if isinstance(defined, cst.FunctionDef) else py.CLASS_DEF
    if any(isinstance(p, cst.Import | cst.ImportFrom) for p in chain):
        return py.IMPORT
    if call is not None:
        return py.CALL
    if any(isinstance(p, cst.Decorator) for p in chain[:3]):
        return py.DECORATOR
    if isinstance(chain[0], cst.Param) and chain[0].name is name:
        return py.PARAMETER
    if any(isinstance(p, cst.Annotation) for p in chain):
        return py.ANNOTATION
    holder = chain[_depth(chain, top)] if _depth(chain, top) < len(chain) else None
    if isinstance(holder, cst.AssignTarget) or (
        isinstance(holder, cst.AugAssign | cst.AnnAssign) and holder.target is top
    ):
        return py.ASSIGNMENT_TARGET
    if isinstance(chain[0], cst.Arg) and chain[0].keyword is name:
        return py.KEYWORD
    return py.ATTRIBUTE if top is not name else py.NAME


def _depth(chain: list[Any], top: Any) -> int:
    """Index in ``chain`` of ``top``'s parent."""
    for index, node in enumerate(chain):
        if node is top:
            return index + 1
    return 0


def _resolution(
    meta: CstMetadata, parents: dict[Any, Any], skeleton: Skeleton, name: Any, top: Any
) -> ResolutionFacts:
    qualified = meta.qualified_names(top)
    bindings: list[Binding] = []
    chain: tuple[str, ...] = ()
    scope = meta.scopes.get(name) if top is name else None
    statement = next((p for p in walk_up(name, parents.get) if _is_import(p)), None)
    if statement is not None:
        chain = _alias_chain(meta, statement, _bound_by(meta, parents, name))
        scope = None
    if scope is not None:
        for assignment in scope[name.value]:
            binding, alias = _binding(meta, skeleton, assignment, name.value)
            bindings.append(binding)
            chain = chain or alias
    return ResolutionFacts(
        qualified_names=tuple(sorted(q.name for q in qualified)),
        bindings=tuple(sorted(set(bindings), key=lambda b: (b.line, b.kind))),
        import_alias_chain=chain,
    )


def _binding(
    meta: CstMetadata, skeleton: Skeleton, assignment: Any, local: str
) -> tuple[Binding, tuple[str, ...]]:
    import libcst as cst
    from libcst.metadata import BuiltinAssignment, ImportAssignment

    if isinstance(assignment, BuiltinAssignment):
        return Binding(kind="builtin"), ()
    where = meta.positions.get(assignment.node)
    line = skeleton.line_map[where.start.line - 1] if where is not None else 0
    node = assignment.node
    if isinstance(assignment, ImportAssignment):
        return Binding(kind="import", line=line), _alias_chain(meta, node, local)
    kinds = {cst.FunctionDef: "def", cst.ClassDef: "class", cst.Param: "param"}
    return Binding(kind=kinds.get(type(node), "assign"), line=line), ()


def _alias_chain(meta: CstMetadata, node: Any, local: str) -> tuple[str, ...]:
    """("np", "numpy") for ``import numpy as np``; (".x.y",) prefixes keep relative dots."""
    import libcst as cst

    prefix = ""
    if isinstance(node, cst.ImportFrom):
        module = _code(meta, node.module) if node.module is not None else ""
        prefix = "." * len(node.relative) + module
        prefix = prefix if prefix.endswith(".") else prefix + "."
    names = node.names if isinstance(node.names, list | tuple) else ()
    for alias in names:
        full = _code(meta, alias.name)
        bound = alias.evaluated_alias or full.split(".")[0]
        if bound == local:
            target = prefix + full if prefix else full
            return (local, target) if target != local else (local,)
    return ()


def _is_import(node: Any) -> bool:
    import libcst as cst

    return isinstance(node, cst.Import | cst.ImportFrom)


def _bound_by(meta: CstMetadata, parents: dict[Any, Any], name: Any) -> str:
    """The local name that the import clause holding ``name`` binds."""
    import libcst as cst

    alias = next((p for p in walk_up(name, parents.get) if isinstance(p, cst.ImportAlias)), None)
    if alias is None:
        return name.value
    return alias.evaluated_alias or _code(meta, alias.name).split(".")[0]


def _code(meta: CstMetadata, node: Any) -> str:
    return squash(meta.module.code_for_node(node))
