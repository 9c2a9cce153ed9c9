"""LibCST's facts from a hit's skeleton equal those from the whole file, for hits deep inside
compound statements (``if``/``elif``/``else``, ``try``, ``with``, loops, ``match``, a def's
header), while the skeleton holds a fraction of the file: the scope of each hit keeps every
binding of its names, each at its own line."""

from __future__ import annotations

import ast

import pytest

from cq.enrich.py_libcst_stage import libcst_facts, skeleton_facts
from cq.enrich.skeleton import Skeleton, build_skeleton
from cq.enrich.stages import Skip

SOURCE = '''\
import os
import os.path as osp

if os.environ.get("X"):
    from json import loads as parse

    def helper(value):
        # the comment names parse
        return parse(value)

    try:
        data = parse("{}")
        for unused in range(3):
            print(unused)
    except ValueError as err:
        data = None
        print(err)
    else:
        for key, item in data.items():
            print(key, item)
        else:
            total = 0
    finally:
        print("done")
elif osp.exists("y"):
    parse = None
    with open("y") as handle, open("z") as other:
        text = handle.read(); size = len(text)
        print(size, other)
else:
    match os.name:
        case "nt":
            sep = "\\\\"
        case _:
            sep = "/"
    print(sep)

    @staticmethod
    def decorated(path=osp.join("a", "b")):
        """A docstring."""
        path = path.strip()
        if path:
            path = path.lower()
        return path
'''

# (text on the hit's line, the name hit there)
HITS = [
    ("return parse(value)", "parse"),
    ('data = parse("{}")', "parse"),
    ("print(err)", "err"),
    ("print(key, item)", "key"),
    ("total = 0", "total"),
    ("text = handle.read()", "text"),
    ("text = handle.read()", "size"),
    ("text = handle.read()", "read"),
    ('sep = "/"', "sep"),
    ("print(sep)", "sep"),
    ("def decorated(path=", "osp"),
    ("def decorated(path=", "path"),
    ("path = path.strip()", "strip"),
    ("return path", "path"),
]


def _whole(lines: list[str], line: int) -> Skeleton:
    """The file as its own skeleton: the reference a skeleton's facts must equal."""
    return Skeleton(
        text="".join(text + "\n" for text in lines),
        line_map=tuple(range(1, len(lines) + 1)),
        hit_row=line,
    )


@pytest.mark.parametrize(("on_line", "name"), HITS)
def test_skeleton_facts_equal_the_whole_files(on_line: str, name: str) -> None:
    lines = SOURCE.splitlines()
    tree = ast.parse(SOURCE)
    line = next(i for i, text in enumerate(lines, 1) if on_line in text)
    col = lines[line - 1].index(name, lines[line - 1].index(on_line[:4]))
    skeleton = build_skeleton(lines, tree, line)
    assert skeleton is not None
    assert len(skeleton.text) < len(SOURCE)
    facts, resolution = libcst_facts(lines, tree, line, col, 1 << 20)
    assert (facts, resolution) == skeleton_facts(_whole(lines, line), col)
    assert resolution is not None and resolution.qualified_names  # it did resolve the name


def test_bindings_in_other_branches_keep_their_lines() -> None:
    """``parse`` is imported in the ``if`` and assigned in the ``elif``: a hit in the ``try``
    sees both, at their lines, as in the whole file."""
    lines = SOURCE.splitlines()
    line = next(i for i, text in enumerate(lines, 1) if 'data = parse("{}")' in text)
    _, resolution = libcst_facts(
        lines, ast.parse(SOURCE), line, lines[line - 1].index("parse"), 1 << 20
    )
    assert resolution is not None
    assert [(b.kind, b.line) for b in resolution.bindings] == [("import", 5), ("assign", 26)]


def test_a_hit_in_a_comment_inside_a_block_finds_no_name() -> None:
    """The comment line holding the hit stays (other comment lines go): LibCST finds no name
    there, as in the whole file, rather than the stage finding no statement."""
    lines = SOURCE.splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "the comment names parse" in text)
    col = lines[line - 1].index("parse")
    facts, resolution = libcst_facts(lines, ast.parse(SOURCE), line, col, 1 << 20)
    assert resolution is None and facts.construct is None


def test_a_module_level_comment_has_no_skeleton() -> None:
    lines = ["import os", "# os is named here", "os.sep"]
    with pytest.raises(Skip):
        libcst_facts(lines, ast.parse("\n".join(lines)), 2, 2, 1 << 20)


def test_a_hit_among_thousands_of_statements_keeps_a_small_skeleton() -> None:
    """A block of 600 assignments, each a hit: each skeleton keeps the bindings of its own
    statement's names, not one stub per statement of the block (a search for ``loads`` in 3,000
    took 37 s, each of its 30 shown hits parsing a skeleton of 3,000 stubs)."""
    body = [f"        v{i} = json.loads(path + '{i}')" for i in range(600)]
    head = ["import json", "", "def load_all(path):", "    try:"]
    tail = ["    except ValueError as err:", "        raise", "    return v0"]
    source = "\n".join([*head, *body, *tail])
    lines = source.splitlines()
    tree = ast.parse(source)
    for line in (5, 604):
        skeleton = build_skeleton(lines, tree, line)
        assert skeleton is not None and len(skeleton.text) < 400, len(skeleton.text)
        col = lines[line - 1].index("loads")
        facts = libcst_facts(lines, tree, line, col, 1 << 20)
        assert facts == skeleton_facts(_whole(lines, line), col)
        assert facts[1] is not None and facts[1].qualified_names == ("json.loads",)
