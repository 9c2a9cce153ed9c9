"""The shortcuts a cold search takes over a file's text find what the plain way finds.

- ``cq.classify.strings.multiline_strings`` skips to the lines that may open a string
  spanning lines and over triple-quoted bodies with ``bytes.find``: the spans are the ones
  ``_MULTILINE`` matched over the whole file gives (the definition it shortcuts).
- ``cq.parse.imported_names`` walks statements only: the names are those every import in the
  file binds, however deep in blocks, handlers and match cases it sits.
- ``cq.parse.cst_metadata`` lists LibCST's scope visitor methods once a process: the names
  are qualified as LibCST's own ``ScopeProvider`` qualifies them.
"""

from __future__ import annotations

import ast

from hypothesis import given, settings
from hypothesis import strategies as st

from cq.classify.strings import _MULTILINE, multiline_strings
from cq.parse import imported_names
from cq.parse.source import SourceFile
from tests.conftest import fuzz_examples

# Pieces that open, close, escape and continue strings, and code around them.
_PIECES = [b'"', b"'", b"\\", b"\n", b"#", b"a", b" ", b'"""', b"'''", b"x = ", b"\\\n", b"r"]


def _spans_over_the_whole_file(data: bytes) -> list[tuple[int, int]]:
    return [m.span("string") for m in _MULTILINE.finditer(data) if m.start("string") >= 0]


@settings(max_examples=fuzz_examples(1500), derandomize=True, database=None, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=60).map(b"".join))
def test_multiline_spans_are_the_whole_file_matches(data: bytes) -> None:
    assert multiline_strings(data) == _spans_over_the_whole_file(data)


def test_multiline_spans_of_docstrings_escapes_and_unclosed_strings() -> None:
    data = (
        b'"""Module."""\n'
        b"x = 'a \\\n b'\n"  # a one-quote string continued by a backslash
        b'def f():\n    """Says \\""" and \\\\"""\n'  # an escaped quote, then an escaped backslash
        b'    s = \'"""\'  # a triple quote inside a one-line string\n'
        b"    return '''open\n"  # never closed
    )
    assert multiline_strings(data) == _spans_over_the_whole_file(data)
    assert data[slice(*multiline_strings(data)[2])] == b'"""Says \\""" and \\\\"""'


def test_imported_names_are_found_in_every_kind_of_block() -> None:
    code = """\
import os.path as osp, sys
if sys:
    from a import b
elif osp:
    import c
else:
    import d
try:
    import e
except ImportError:
    import f
else:
    import g
finally:
    import h
for _ in ():
    import i
else:
    import j
while False:
    import k
with open(__file__):
    import l
def fn():
    import m
    class Inner:
        import n
match sys:
    case _:
        import o
async def co():
    async with x:
        import p
    async for _ in y:
        import q
x = lambda: __import__("not_an_import")
"""
    source = SourceFile("m.py", "python", code.encode(), code, "digest-of-m")
    expected = {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(ast.parse(code))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert imported_names(source) == expected
    assert expected == {"osp", "sys", *"bcdefghijklmnopq"}


def test_the_scope_metadata_is_libcsts_own() -> None:
    """``cq.parse.cst_metadata`` lists the scope provider's visitor methods once a process
    (``_scopes_provider``): its scopes qualify every name as LibCST's own provider does."""
    import libcst
    from libcst.metadata import MetadataWrapper, PositionProvider, ScopeProvider

    from cq.parse import cst_metadata

    code = (
        "import os.path as osp\nfrom collections import OrderedDict\n\n"
        "class Registry(OrderedDict):\n"
        "    def add(self, name, *, where=osp.join):\n"
        "        def inner():\n            nonlocal name\n            return where(name)\n"
        "        return [inner() for _ in range(2)] + [lambda x: osp.sep + x]\n"
    )

    def qualified(module: libcst.Module, scopes) -> list[tuple[int, int, str, frozenset]]:
        positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        return sorted(
            (
                positions[node].start.line,
                positions[node].start.column,
                node.value,
                frozenset(q.name for q in scopes[node].get_qualified_names_for(node)),
            )
            for node in scopes
            if isinstance(node, libcst.Name) and scopes[node] is not None
        )

    ours = cst_metadata(code)
    module = libcst.parse_module(code)
    reference = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    mine = qualified(ours.module, ours.scopes)
    assert mine == qualified(module, reference)
    assert (5, 33, "osp", frozenset({"os.path"})) in mine  # the default's import, resolved
