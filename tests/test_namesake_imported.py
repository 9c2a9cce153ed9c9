"""A name defined in two modules: the one other code imports answers "where is X?", not a
private copy ranked first by its path (``pyro.contrib.minipyro``'s ``apply_stack`` beside
``pyro.poutine.runtime``'s)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

TREE = {
    # sorts first by path, and nothing imports it
    "pkg/contrib/mini.py": "def apply_stack(msg):\n    return msg\n",
    "pkg/runtime/stack.py": "def apply_stack(initial_msg):\n    return initial_msg\n",
    "pkg/handlers/one.py": (
        "from pkg.runtime.stack import apply_stack\n\n\ndef one(m):\n    return apply_stack(m)\n"
    ),
    "pkg/handlers/two.py": (
        "from pkg.runtime import stack\nfrom pkg.runtime.stack import apply_stack\n\n\n"
        "def two(m):\n    return apply_stack(m)\n"
    ),
}


def test_the_imported_definition_answers(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    for query in ("where is apply_stack?", "apply_stack"):
        run = run_cq("search", query, "--root", str(tmp_path), "--no-semantic")
        assert run.returncode == 0, run.stderr
        answer = run.stdout.split("\n\n")[1]
        assert "`pkg/runtime/stack.py:1:" in answer.splitlines()[0], (query, answer)
