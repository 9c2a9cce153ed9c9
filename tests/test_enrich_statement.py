"""Stage 1 (ast-grep) parses only the top-level statement holding a hit when the file has no
syntax error (``cq.enrich.nodes.statement_of``): what it reads there must be what it reads
in the whole file. The same text with a broken line at its end is read whole (its tree has
an error), so every hit's facts are compared between the two ways, on a module written to
hold the shapes that could tell them apart and on cq's own modules. Real parsers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cq.enrich.nodes import HitSpan, statement_of
from cq.model import Enrichment, Finding
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
)


def _facts(enrichment: Enrichment) -> tuple[object, ...]:
    """What stage 1 reads, as the report shows it (merged with stage 5's, and agreed on);
    not the parse's quality nor LibCST's outcome: the broken copy has a syntax error, so
    those differ by design."""
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


def _compare(tmp_path: Path, text: str) -> int:
    assert statements_alone()  # a process that searches once: the pytest process
    (tmp_path / "sliced.py").write_text(text)
    (tmp_path / "whole.py").write_text(text + "def broken(:\n")
    hits = _hits(text)
    sliced = _enriched(tmp_path, "sliced.py", hits)
    whole = _enriched(tmp_path, "whole.py", hits)
    assert len(sliced) == len(whole) == len(hits)
    differ = [(h[:4], s, w) for h, s, w in zip(hits, sliced, whole, strict=True) if s != w]
    assert differ == []
    # and the clean copy was read by statement: a hit outside every statement, or after
    # another statement on its line, is read whole there too
    data = text.encode()
    tree = ts_parser("python").parse(data)
    starts = [0, *(i + 1 for i, byte in enumerate(data) if byte == ord("\n"))]
    by_statement = sum(
        statement_of(tree, data, HitSpan(n - 1, c, e, starts[n - 1] + c, starts[n - 1] + e))
        is not None
        for n, c, e, _, _ in hits
    )
    assert by_statement > 0.8 * len(hits)
    return len(hits)


def test_a_statement_read_alone_gives_every_hit_the_facts_of_the_whole_file(
    tmp_path: Path,
) -> None:
    assert _compare(tmp_path, _SHAPES) > 120


@pytest.mark.parametrize(
    "module", ["cq/enrich/python.py", "cq/classify/slices.py", "cq/index/evidence.py"]
)
def test_cqs_own_modules_read_the_same_by_statement(tmp_path: Path, module: str) -> None:
    text = (Path(__file__).resolve().parent.parent / module).read_text()
    assert _compare(tmp_path, text) > 500
