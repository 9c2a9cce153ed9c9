"""A call typed alone is answered by the definition of the function it calls.

``cq search 'Arg::new()'`` (clap: the text only in a ``///`` comment) and ``'Utc::now()'``
(chrono: in doc comments and tests) matched as text, so the report said "No definition
found", best hit a doc line; only a call written nowhere was searched as the name it calls.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

TREE = {
    "src/arg.rs": (
        "pub struct Arg {\n    id: String,\n}\n\nimpl Arg {\n"
        "    pub fn new(id: &str) -> Self {\n        Arg { id: id.to_owned() }\n    }\n}\n"
    ),
    "src/command.rs": (
        "/// Adds an argument made with Arg::new()\n"
        "pub fn arg(cmd: Command, arg: Arg) -> Command {\n    cmd.push(arg)\n}\n"
    ),
    "tests/args.rs": '#[test]\nfn named() {\n    let a = Arg::new();\n    assert!(a.ok("x"));\n}\n',
    "app/log.py": 'def report(msg):\n    print("starting up")\n    return msg\n',
}


def _search(tree: Path, query: str) -> str:
    run = run_cq("search", query, "--root", str(tree), "--no-semantic")
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_a_call_whose_text_is_found_is_answered_by_the_definition_it_calls(
    tmp_path: Path,
) -> None:
    write_tree(tmp_path, TREE)
    out = _search(tmp_path, "Arg::new()")
    answer = out.split("\n\n")[1]
    assert answer.startswith("**Answer:** `new` "), answer
    assert "`src/arg.rs:6:" in answer, answer
    assert "`src/command.rs:1:" in out and "`tests/args.rs:3:" in out, out  # its text's hits


def test_a_call_of_a_function_the_tree_does_not_define_is_searched_as_typed(
    tmp_path: Path,
) -> None:
    """``print`` is a builtin: its every call would bury the one line typed."""
    write_tree(tmp_path, TREE)
    out = _search(tmp_path, 'print("starting up")')
    assert "1 finding" in out and "`app/log.py:2:" in out, out
