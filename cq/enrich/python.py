"""The five Python stages for one hit, in order, each fail-open, merged by gap-fill.

1. ast-grep (cached ``SgRoot`` of the top-level statement holding the hit, where the
   statements around it parse alone without a syntax error; else of the file): signature,
   decorators, class, call target, scope chain, structural context;
2. ``ast``: async/generator/awaits/yields/returns of the function the hit defines (only
   when ast-grep read a ``def``, whose source alone is parsed; the whole file only when
   ast-grep could not read the hit);
3. import detail of the import statement the hit is in;
4. LibCST metadata on a skeleton of the file: qualified names, bindings, alias chain, call
   receiver/method — fills only fields still empty. It costs ~15 ms a hit even on a small
   skeleton (and 0.3 s to import), so it runs only where scopes can tell something ast-grep
   cannot: not for the name of a ``def``/``class`` (its scope chain already is its qualified
   name), not in strings or comments, and for ``a.b.method(...)`` calls only when ``a`` is
   bound by an import (``self.x.y()``, ``Local.register()`` resolve to nothing new);
5. tree-sitter, on those statements parsed alone (else the file): last gap-fill, and
   parse quality (the file's, where the statements holding the hit do not parse alone).
Then agreement across 1, 4 and 5 (see ``agreement``). Open ``enrich_python`` first.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from cq.enrich.agreement import build_agreement, crosscheck_reason
from cq.enrich.facts import StructuralFacts, produced
from cq.enrich.nodes import HitSpan, SgView, sg_locate, statement_of, top_level, ts_locate
from cq.enrich.parse_quality import parse_quality
from cq.enrich.py_ast_stage import facts_of_def, function_facts
from cq.enrich.py_import_stage import import_facts
from cq.enrich.py_libcst_stage import libcst_facts
from cq.enrich.py_structure import structural_facts
from cq.enrich.stages import QUOTA, Limited, Skip, StageRunner
from cq.model import CODE_CATEGORIES, CallFacts, Enrichment, Finding, ParseQuality, ResolutionFacts
from cq.model.tuning import EnrichTuning, ParseTuning
from cq.parse import (
    SourceFile,
    imported_names,
    py_ast,
    sg_root,
    sg_statement,
    statements_alone,
    ts_span,
    ts_tree,
)


class PythonHit:
    """What the stages need to know about one hit, and the size caps (``EnrichTuning``:
    files over ``max_deep_bytes`` get only the tree-sitter stage, as Python-object-per-node
    parses of multi-megabyte generated files cost seconds and cannot be interrupted)."""

    def __init__(
        self,
        source: SourceFile,
        span: HitSpan,
        text: str,
        lines: list[str],
        tuning: EnrichTuning,
        caps: ParseTuning,
    ) -> None:
        self.source, self.span, self.text, self.lines = source, span, text, lines
        self.tuning, self.caps = tuning, caps
        self._run: _Run | None = None
        self._run_looked_for = False

    def run(self) -> _Run | None:
        """The top-level statements holding the hit parsed alone (``_statement_run``),
        looked for once."""
        if not self._run_looked_for:
            self._run, self._run_looked_for = _statement_run(self), True
        return self._run


class _Run(msgspec.Struct, frozen=True):
    """Whole top-level statements of a file holding a hit, parsed alone by tree-sitter
    without a syntax error: where they are in the file (``offset`` to ``end``), their
    ``tree``, and the hit's ``span`` in them."""

    offset: int
    end: int
    tree: Any
    span: HitSpan


_NOT_RESOLVABLE = frozenset({"function_def", "class_def", "comment", "string"})
# The hit is in the module path of ``from a.b import c`` (``a`` or ``b``): the statement binds
# none of those names, so LibCST's scopes have nothing to say (its parse would be wasted).
_FROM_MODULE = re.compile(r"[ \t]*from[ \t]+[\w.]*$")


def enrich_python(
    hit: PythonHit, runner: StageRunner, *, libcst_limit: str | None, crosscheck: bool
) -> Enrichment:
    """Run the five stages for ``hit``; ``libcst_limit`` names a limit that stops stage 4."""
    first = runner.run("ast_grep", lambda: _ast_grep(hit))
    sg_node = first[1] if first else None
    function = runner.run("python_ast", lambda: _python_ast(hit, first))
    imported = runner.run("imports", lambda: _imports(hit, sg_node))
    fourth = runner.run("libcst", lambda: _libcst(hit, libcst_limit, first, runner))
    fifth = runner.run("tree_sitter", lambda: _tree_sitter(hit))
    sources = {
        "ast_grep": first[0] if first else None,
        "libcst": fourth[0] if fourth else None,
        "tree_sitter": fifth[0] if fifth else None,
    }
    merged = _gap_fill([f for f in sources.values() if f is not None])
    agreement = build_agreement(sources)
    mismatch = crosscheck_reason(agreement) if crosscheck else None
    if mismatch is not None:
        runner.reasons.append(mismatch)
    return Enrichment(
        status=runner.status(),
        construct=merged.construct,
        signature=merged.signature,
        decorators=merged.decorators,
        class_context=merged.class_context,
        scope_chain=merged.scope_chain,
        structural_context=merged.structural_context,
        call=_call(merged),
        function=function,
        import_=imported,
        resolution=_nonempty(fourth[1] if fourth else None),
        parse_quality=fifth[1] if fifth and fifth[1] != ParseQuality() else None,
        agreement=agreement,
        stages=runner.stage_status(),
        degrade_reasons=tuple(runner.reasons),
    )


def _check_size(hit: PythonHit) -> None:
    if len(hit.source.data) > hit.tuning.max_deep_bytes:
        raise Limited(f"file over {_size(hit.tuning.max_deep_bytes)}")


def _ast_grep(hit: PythonHit) -> tuple[StructuralFacts, SgView]:
    _check_size(hit)
    statement = _statement(hit)
    if statement is not None:
        start, end, within = statement
        node = sg_locate(sg_statement(hit.source, start, end).root(), within)
        return structural_facts(node, with_receiver=False), node
    root = sg_root(hit.source)
    if root is None:
        raise Limited("file is not UTF-8")
    node = sg_locate(root.root(), hit.span)
    return structural_facts(node, with_receiver=False), node


def _statement(hit: PythonHit) -> tuple[int, int, HitSpan] | None:
    """Where ast-grep parses only the top-level statement holding the hit: in a UTF-8 file
    whose statements around the hit parse alone without a syntax error (``PythonHit.run``),
    in a process that searches once (``statements_alone``; a long-lived one keeps whole
    files' trees for its later searches' other hits)."""
    if not statements_alone() or hit.source.text is None:
        return None
    run = hit.run()
    if run is None:
        return None
    found = statement_of(run.tree, hit.source.data[run.offset : run.end], run.span)
    if found is None:
        return None
    start, end, within = found
    return start + run.offset, end + run.offset, within


def _statement_run(hit: PythonHit) -> _Run | None:
    """The whole top-level statements holding the hit (``cq.classify.TopLevel``) parsed
    alone by tree-sitter, when they parse without a syntax error. Parsed alone, whole
    top-level statements are the same subtrees as in their file
    (``cq.enrich.nodes.statement_of``), so stages 1 and 5 read there what they would read in
    the file's tree, for a share of its bytes: ``get``'s shown hits on the stdlib are in 21
    files of 917 KB, 107 CPU-ms of tree-sitter parsing whole
    (bench/results/2026-11-30-speed16). None when they do not parse: the hit is then read
    in the file's tree, and the parse quality is the file's."""
    source = hit.source
    if len(source.data) > hit.caps.max_parse_bytes:
        return None
    start, end = top_level(source).run(hit.span.byte_start)
    if not (start <= hit.span.byte_start and hit.span.byte_end <= end):
        return None
    tree = ts_span(source, start, end)
    if tree.root_node.has_error:
        return None
    span = hit.span
    within = HitSpan(
        row=span.row - source.data.count(b"\n", 0, start),
        col=span.col,
        end_col=span.end_col,
        byte_start=span.byte_start - start,
        byte_end=span.byte_end - start,
    )
    return _Run(start, end, tree, within)


def _python_ast(hit: PythonHit, first: tuple[StructuralFacts, SgView] | None) -> Any:
    if first is not None and first[0].construct != "function_def":
        raise Skip("not a function definition")  # no need to parse the file
    _check_size(hit)
    facts = _facts_of_own_def(first[1]) if first is not None else None
    if facts is None:
        facts = function_facts(py_ast(hit.source), hit.span.row + 1, hit.text)
    if facts is None:
        raise Skip("not a function definition")
    return facts


def _facts_of_own_def(name: SgView) -> Any:
    """Stage 2 on the ``def`` alone: parsing one function instead of its whole file."""
    func = name.parent()
    if func is None or func.kind() != "function_definition":
        return None
    return facts_of_def(func.text(), func.node.range().start.column, name.text())


def _imports(hit: PythonHit, node: SgView | None) -> Any:
    if node is None:
        raise Skip("no ast-grep node")
    facts = import_facts(node, hit.text)
    if facts is None:
        raise Skip("not in an import")
    return facts


def _libcst(
    hit: PythonHit,
    limit: str | None,
    first: tuple[StructuralFacts, SgView] | None,
    runner: StageRunner,
) -> tuple[StructuralFacts, ResolutionFacts | None]:
    if first is not None and not _resolvable(first[0], hit):
        raise Skip("nothing for scopes to resolve")
    # a file that is not UTF-8 has no lines (it is said below)
    if hit.source.text is not None and _FROM_MODULE.match(hit.lines[hit.span.row], 0, hit.span.col):
        raise Skip("a module path: nothing for scopes to resolve")
    if limit is not None:
        runner.complete = limit == QUOTA  # the quota is deterministic, the clock is not
        raise Limited(limit)
    if hit.source.text is None:
        raise Limited("file is not UTF-8")
    _check_size(hit)
    return libcst_facts(
        hit.lines,
        py_ast(hit.source),
        hit.span.row + 1,
        hit.span.col,
        hit.tuning.max_skeleton_bytes,
    )


def may_resolve(finding: Finding, before: bytes, data: bytes) -> bool:
    """Whether stage 4 may run for ``finding``, told before any stage from its category,
    ``before`` (its line up to it) and its file's ``data`` (``_resolvable`` decides once
    ast-grep has read the hit): a Python use of a name in code, not a definition's name nor
    text in a string or comment; for the name of a method called on a receiver, only when
    the receiver's first name is on an import line (over-told, never missed: a name on an
    import line need not be imported; a receiver that is not a chain of names says yes)."""
    if finding.language != "python" or finding.category not in _MAY_RESOLVE:
        return False
    if finding.category != "callsite":
        return True
    receiver = _RECEIVER.search(before)
    if receiver is None:
        return True
    root = re.escape(receiver.group(1))
    if root in (b"self", b"cls"):
        return False
    on_import = rb"\bimport\b[^\n;]*\b%s\b|\bimport\s*\([^)]*\b%s\b" % (root, root)
    return re.search(on_import, data) is not None


_MAY_RESOLVE = (CODE_CATEGORIES - {"definition"}) | {"text_match"}
# ``a.b.`` before a method's name: its first name (not after a call, a subscript or a dot)
_RECEIVER = re.compile(rb"(?<![\w.)\]}'\"])([A-Za-z_]\w*)(?:\s*\.\s*[A-Za-z_]\w*)*\s*\.\s*$")


def _resolvable(facts: StructuralFacts, hit: PythonHit) -> bool:
    """Whether LibCST's scopes can add to what ast-grep read (see stage 4 above)."""
    if facts.construct in _NOT_RESOLVABLE:
        return False
    root, dot, _ = (facts.call_target or "").partition(".")
    if not dot:
        return True
    if not root.isidentifier() or root in ("self", "cls"):  # f().x(), self.x(): no import
        return False
    return root in imported_names(hit.source)


def _tree_sitter(hit: PythonHit) -> tuple[StructuralFacts, ParseQuality]:
    if len(hit.source.data) > hit.caps.max_parse_bytes:
        raise Limited(f"file over {_size(hit.caps.max_parse_bytes)}")
    run = hit.run()
    tree, span = (run.tree, run.span) if run is not None else (ts_tree(hit.source), hit.span)
    node = ts_locate(tree, span)
    return structural_facts(node, with_receiver=True), parse_quality(tree, node, "python")


def _gap_fill(sources: list[StructuralFacts]) -> StructuralFacts:
    """Earlier sources win; a later source only fills fields still empty."""
    merged: dict[str, Any] = {}
    for facts in sources:
        for name, value in produced(facts).items():
            merged.setdefault(name, value)
    return StructuralFacts(**merged)


def _call(facts: StructuralFacts) -> CallFacts | None:
    if not (facts.call_target or facts.call_receiver or facts.call_method):
        return None
    return CallFacts(
        target=facts.call_target, receiver=facts.call_receiver, method=facts.call_method
    )


def _nonempty(resolution: ResolutionFacts | None) -> ResolutionFacts | None:
    if resolution is None or resolution == ResolutionFacts():
        return None
    return resolution


def _size(limit: int) -> str:
    """``1 MiB`` for a limit of 1,048,576 bytes (degrade reasons name the limit)."""
    return f"{limit / 1024 / 1024:g} MiB"
