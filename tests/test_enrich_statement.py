"""Stages 1 (ast-grep) and 5 (tree-sitter) read a hit in the top-level statements holding it,
parsed alone (``cq.enrich.python``: found by the slices' line scan, ``cq.classify.TopLevel``),
when they parse without a syntax error: what they read there must be what they read in the
whole file. A long-lived process's stage 1 reads whole files (``cq.parse.searches_again``),
so every hit's facts are compared between the two ways; stage 5's facts and the statement
found are compared with the file's tree directly; on a module written to hold the shapes
that could tell them apart and on cq's own modules. Real parsers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cq.classify import TopLevel
from cq.enrich.nodes import HitSpan, statement_of, ts_locate
from cq.enrich.py_structure import structural_facts
from cq.model import Enrichment, Finding
from cq.parse import trees
from cq.parse.trees import statements_alone, ts_parser
from tests.enrich_hits import enrich

_SHAPES = '''"""A module docstring with def fake(): inside."""
import os; import sys  # two statements on one line
from os import path; from sys import \\
    argv, version  # a statement after another, going on to the next line
from collections import (
    OrderedDict,
)

CONSTANT = os.path.join("a", "b"); OTHER = sys.argv


@decorator(arg=1)
@other.decorator
class Outer(Base, metaclass=Meta):
    """class fake:
def not_a_def(): pass
"""

    attribute: int = CONSTANT

    @property
    def value(self) -> int:
        # a comment inside the method
        return self.attribute.bit_length()

    class Inner:
        def deep(self, x=OrderedDict()):
            def local():
                nonlocal x
                return x
            return local()
        # a comment at the end of the inner class
# a comment at column 0, between members

    async def run(self, *args, **kwargs):
        await self.value; yield args
    # trailing comment, indented


def free(a,
         b=(1,
2)):
    return [a,
b]  # a line of a call at column 0


if __name__ == "__main__":
    free(1)
else:
    Outer().run()
# the last comment
'''


_READ = (
    "construct",
    "signature",
    "decorators",
    "class_context",
    "scope_chain",
    "structural_context",
    "call",
    "function",
    "import_",
    "agreement",
    "parse_quality",
)


def _facts(enrichment: Enrichment) -> tuple[object, ...]:
    """What stages 1 and 5 read, as the report shows it (merged, and agreed on)."""
    return tuple(getattr(enrichment, name) for name in _READ)


def _hits(text: str) -> list[tuple[int, int, int, str, str]]:
    """Every word and comment of ``text``: (line, column, end column, word, line text)."""
    found = []
    for number, line in enumerate(text.split("\n"), start=1):
        for match in re.finditer(r"[A-Za-z_]\w*|#", line):
            found.append((number, match.start(), match.end(), match.group(), line))
    return found


def _enriched(root: Path, rel: str, hits: list[tuple[int, int, int, str, str]]) -> list[tuple]:
    findings = [
        Finding(
            file=rel,
            line=line,
            col=col,
            end_col=end,
            text=word,
            line_text=text,
            language="python",
            category="text_match",
            confidence=0.5,
        )
        for line, col, end, word, text in hits
    ]
    # no LibCST: its scopes do not come from stage 1, and its per-hit cost is the test's time
    return [_facts(e) for e in enrich(root, *findings, libcst_hits=0, max_hits=len(findings))]


def _compare(tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> int:
    assert statements_alone()  # a process that searches once: the pytest process
    (tmp_path / "code.py").write_text(text)
    hits = _hits(text)
    alone = _enriched(tmp_path, "code.py", hits)
    with monkeypatch.context() as patched:
        patched.setattr(trees, "_searches_again", True)  # a long-lived process: whole files
        whole = _enriched(tmp_path, "code.py", hits)
    assert len(alone) == len(whole) == len(hits)
    differ = [(h[:4], a, w) for h, a, w in zip(hits, alone, whole, strict=True) if a != w]
    assert differ == []
    return _runs_agree(text, hits)


def _runs_agree(text: str, hits: list[tuple[int, int, int, str, str]]) -> int:
    """The statement the run gives each hit is the file tree's (``statement_of``), and stage
    5 reads the same there; most hits are read that way (a hit outside every statement, or
    after another on its line, or in a run that does not parse alone, is read whole)."""
    data = text.encode()
    tree = ts_parser("python").parse(data)
    top = TopLevel(data)
    starts = [0, *(i + 1 for i, byte in enumerate(data) if byte == ord("\n"))]
    by_statement = 0
    for n, c, e, word, _ in hits:
        span = HitSpan(n - 1, c, e, starts[n - 1] + c, starts[n - 1] + e)
        first, last = top.run(span.byte_start)
        assert first <= span.byte_start and span.byte_end <= last, (n, word)
        run = ts_parser("python").parse(data[first:last])
        if run.root_node.has_error:  # the scan took a line inside a statement for a start
            continue  # (``2)):`` at column 0): the file's tree reads this hit
        within = HitSpan(
            span.row - data.count(b"\n", 0, first),
            c,
            e,
            span.byte_start - first,
            span.byte_end - first,
        )
        found = statement_of(run, data[first:last], within)
        expected = statement_of(tree, data, span)
        shifted = None if found is None else (found[0] + first, found[1] + first, found[2])
        assert shifted == expected, (n, word)
        by_statement += expected is not None
        in_run = structural_facts(ts_locate(run, within), with_receiver=True)
        in_file = structural_facts(ts_locate(tree, span), with_receiver=True)
        assert in_run == in_file, (n, word)
    # most hits are read by statement even in the shapes written to trip the scan (122 of
    # 155 there; 90% and more in cq's modules)
    assert by_statement > 0.75 * len(hits)
    return len(hits)


def test_a_statement_read_alone_gives_every_hit_the_facts_of_the_whole_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _compare(tmp_path, _SHAPES, monkeypatch) > 120


@pytest.mark.parametrize(
    "module", ["cq/enrich/python.py", "cq/classify/slices.py", "cq/index/evidence.py"]
)
def test_cqs_own_modules_read_the_same_by_statement(
    tmp_path: Path, module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (Path(__file__).resolve().parent.parent / module).read_text()
    assert _compare(tmp_path, text, monkeypatch) > 500
