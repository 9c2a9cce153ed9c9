"""Ranking end to end: real cq, real classification, on a fixture repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

FILES = {
    "pkg/store.py": (
        "# insert_edge keeps the graph acyclic\n"
        "from pkg.graph import insert_edge\n"
        "\n"
        "\n"
        "def rebuild(graph, edges):\n"
        "    for a, b in edges:\n"
        "        insert_edge(graph, a, b)\n"
    ),
    "pkg/graph.py": (
        "def insert_edge(graph, a, b):\n"
        '    """Add an edge; see insert_edge docs."""\n'
        "    graph.setdefault(a, set()).add(b)\n"
    ),
    "tests/test_graph.py": (
        "from pkg.graph import insert_edge\n"
        "\n"
        "\n"
        "def test_insert():\n"
        "    g = {}\n"
        "    insert_edge(g, 1, 2)\n"
    ),
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("rank"), FILES)


def _order(repo: Path, *extra: str) -> list[tuple[str, str]]:
    run = run_cq("search", "insert_edge", "--root", str(repo), "--format", "json", *extra)
    assert run.returncode == 0, run.stderr
    return [(f["file"], f["category"]) for f in run.json()["findings"]]


def test_definition_then_callsites_then_imports_then_comments(repo: Path) -> None:
    src = [cat for file, cat in _order(repo) if file.startswith("pkg/")]
    kinds = ["definition", "callsite", "from_import", "docstring_match", "comment_match"]
    assert [k for k in src if k in kinds] == [k for k in kinds if k in src]
    assert src[0] == "definition"
    assert {"callsite", "from_import", "comment_match"} <= set(src)


def test_source_before_tests_and_focus_tests_flips_it(repo: Path) -> None:
    calls = [file for file, cat in _order(repo) if cat == "callsite"]
    assert calls == ["pkg/store.py", "tests/test_graph.py"]
    focused = [file for file, cat in _order(repo, "--focus", "tests") if cat == "callsite"]
    assert focused == ["tests/test_graph.py", "pkg/store.py"]
    everything = _order(repo, "--focus", "tests")
    assert len(everything) == len(_order(repo))  # demoted, never hidden


def test_markdown_answer_is_the_definition(repo: Path) -> None:
    run = run_cq("search", "insert_edge", "--root", str(repo))
    head = run.stdout.splitlines()[:6]
    assert head[2].startswith("**Answer:**") and "`pkg/graph.py:1:4`" in head[2]
    assert "def insert_edge(graph, a, b):" in head  # the line itself, fenced exactly


def test_a_vendored_copy_named_after_the_query_ranks_below_the_own_definition(
    tmp_path: Path,
) -> None:
    """site-packages/setuptools/command/register.py must not outrank the project's own
    ``def register`` on the strength of its file name."""
    body = "def register(name):\n    return name\n"
    root = write_tree(tmp_path, {"app/plugins.py": body, "third_party/tool/register.py": body})
    run = run_cq("search", "register", "--root", str(root), "--format", "json")
    files = [f["file"] for f in run.json()["findings"] if f["category"] == "definition"]
    assert files == ["app/plugins.py", "third_party/tool/register.py"]


RUST_LIB = """\
pub fn register() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls() { register(); }
}
"""


def test_rust_cfg_test_roles_are_cached_with_the_records(tmp_path: Path) -> None:
    """A repeat Rust search reads the ``#[cfg(test)]`` ranges from the cache: no parse, not
    even an import of the Rust grammar, and the same roles."""
    root = write_tree(tmp_path / "crate", {"src/lib.rs": RUST_LIB})
    code = (
        "import sys, json, io, contextlib; from cq.cli import main; out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    main(['search', 'register', '--root', sys.argv[1], '--format', 'json'])\n"
        "roles = {f['line']: f['role'] for f in json.loads(out.getvalue())['findings']}\n"
        "print(json.dumps([roles, 'tree_sitter_rust' in sys.modules]))"
    )
    env = {**os.environ, "CQ_CACHE_DIR": str(tmp_path / "cache")}
    runs = [
        subprocess.run(
            [sys.executable, "-c", code, str(root)], capture_output=True, text=True, env=env
        )
        for _ in range(2)
    ]
    first, second = (json.loads(r.stdout.strip().splitlines()[-1]) for r in runs)
    assert first == [{"1": "src", "8": "test"}, True]
    assert second == [{"1": "src", "8": "test"}, False]


@pytest.mark.parametrize(
    ("query", "files", "where"),
    [
        # "class Schema" is also the start of "class SchemaABC", which sorts first by path
        (
            "class Schema",
            {
                "pkg/base.py": "class SchemaABC:\n    pass\n",
                "pkg/schema.py": "import os\n\n\nclass Schema(SchemaABC):\n    pass\n",
            },
            "pkg/schema.py:4:",
        ),
        (
            "fn parse",
            {
                "src/a.rs": "fn parse_rfc2822(s: &str) {}\n",
                "src/b.rs": "pub fn parse(s: &str) {}\n",
            },
            "src/b.rs:1:",
        ),
        # "Schema(" also matches "class AuthorSchema(Schema):", a definition of another name
        (
            "Schema(",
            {
                "bench/authors.py": "class AuthorSchema(Schema):\n    pass\n",
                "pkg/schema.py": "import os\n\n\nclass Schema(object):\n    pass\n",
            },
            "pkg/schema.py:4:",
        ),
    ],
)
def test_a_definitions_line_typed_as_text_answers_with_that_name(
    tmp_path: Path, query: str, files: dict[str, str], where: str
) -> None:
    """A user pasting ``class Schema``, ``fn parse`` or ``Schema(`` wants that definition, not
    a longer name that holds the text (``SchemaABC``, ``parse_rfc2822``, ``AuthorSchema``):
    the Answer must not name a definition of another name."""
    root = write_tree(tmp_path, files)
    run = run_cq("search", query, "--root", str(root))
    assert run.returncode == 0, run.stderr
    answer = run.stdout.splitlines()[2]
    assert answer.startswith("**Answer:**") and f"`{where}" in answer, run.stdout


def test_a_name_with_its_parenthesis_searched_whole_word_answers_with_its_definition(
    tmp_path: Path,
) -> None:
    """``cq search -w 'get_value('`` printed "No definition found. Best hit: ... definition"
    above ``def get_value(...)``: the report denied the definition it showed."""
    root = write_tree(
        tmp_path,
        {
            "pkg/utils.py": "def get_value(obj, key):\n    return obj[key]\n",
            "pkg/use.py": "from pkg.utils import get_value\n\nget_value({}, 'a')\n",
        },
    )
    run = run_cq("search", "-w", "get_value(", "--root", str(root))
    assert run.returncode == 0, run.stderr
    answer = run.stdout.splitlines()[2]
    assert answer.startswith("**Answer:**") and "`pkg/utils.py:1:" in answer, run.stdout


IMPLS = {
    "src/action.rs": "pub enum ArgAction {\n    Set,\n}\n\nimpl ArgAction {\n"
    "    pub fn takes_values(&self) -> bool {\n        true\n    }\n}\n",
    "src/arg.rs": "pub struct Arg;\n\nimpl Arg {\n    pub fn new() -> Self {\n        Arg\n"
    "    }\n}\n",
}


@pytest.mark.parametrize("args", [("impl Arg",), ("-F", "impl Arg")], ids=["as-typed", "literal"])
def test_a_literal_ending_inside_a_longer_name_ranks_below_the_whole_name(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """``impl Arg`` is also the start of ``impl ArgAction``: the block of ``Arg`` itself is
    the best hit, and code that is no string is not said to "write" the text."""
    root = write_tree(tmp_path, IMPLS)
    run = run_cq("search", *args, "--root", str(root))
    assert run.returncode == 0, run.stderr
    answer = run.stdout.splitlines()[2]
    assert answer.startswith("**No definition found.** Best hit: `src/arg.rs:3:0`"), run.stdout
