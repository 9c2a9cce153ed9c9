"""A question about "it" that nothing names, and that finds nothing, says how to name it
(--context, --follow-up) instead of a bare "No findings". Real cq subprocesses."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

FILES = {
    "utils.py": "def parse_config(path):\n    return path\n",
    "app.py": "from utils import parse_config\n\n\ndef start():\n    return parse_config('x')\n",
}
HINT = "Nothing said what `it` is"


def test_an_unnamed_it_that_finds_nothing_says_how_to_name_it(tmp_path: Path) -> None:
    tree = write_tree(tmp_path, FILES)
    bare = run_cq("search", "who calls it?", "--root", str(tree))
    assert bare.returncode == 1, bare.stderr
    assert "No findings for" in bare.stdout
    hint = next(line for line in bare.stdout.splitlines() if line.startswith(HINT))
    assert "--context TEXT" in hint and "--follow-up" in hint
    named = run_cq("search", "who calls it?", "--root", str(tree), "--context", "parse_config")
    assert named.returncode == 0 and "**Answer:**" in named.stdout and HINT not in named.stdout
    assert "`app.py:5:" in named.stdout  # the call the hint's way led to
    run_cq("search", "parse_config", "--root", str(tree), "--follow-up")
    followed = run_cq("search", "who calls it?", "--root", str(tree), "--follow-up")
    assert "**Answer:**" in followed.stdout and HINT not in followed.stdout


OWNED = {
    "lib/schema.py": (
        "class Schema:\n    def load(self, data):\n        return data\n\n"
        "    def loads(self, text):\n        return self.load(text)\n"
    ),
    "lib/loader.py": (
        "class Loader:\n    def load(self):\n        return None\n\n\n"
        "def run():\n    return Loader().load()\n"
    ),
    "app.py": "def go(schema):\n    return schema.load({})\n",
}


def test_a_follow_up_keeps_the_owner_of_the_method_it_answered(tmp_path: Path) -> None:
    """``Schema.load`` then "who calls it?": "it" is ``Schema.load``, as the first search
    asked, not every class's ``load`` (``Loader().load()`` is another method)."""
    tree = write_tree(tmp_path, OWNED)
    run_cq("search", "Schema.load", "--root", str(tree), "--follow-up")
    followed = run_cq("search", "who calls it?", "--root", str(tree), "--follow-up")
    assert followed.returncode == 0, followed.stderr
    answer = followed.stdout.split("\n\n")[1]
    assert answer.startswith("**Answer:** 2 shown callsites of `Schema.load`"), followed.stdout
    assert "- `lib/schema.py:6:20` in `Schema.loads`" in answer, answer
    assert "- `app.py:2:18` in `go`" in answer, answer
    assert "loader.py" not in answer, answer
    said = (
        "`it` read as `Schema.load`, the last `--follow-up` search's answer: searched as that name"
    )
    assert said in followed.stdout.splitlines(), followed.stdout
    data = run_cq(
        "search", "who calls it?", "--root", str(tree), "--follow-up", "--format", "json"
    ).json()
    assert data["summary"]["subject"] == "Schema.load"


def test_where_is_it_used_answers_the_uses_of_the_name_given(tmp_path: Path) -> None:
    """ "where is it used?" with the name from ``--context`` or a ``--follow-up`` of a plain
    name lists its uses, as "where is `parse_config` used?" does, not its definition."""
    tree = write_tree(tmp_path, FILES)
    uses = "**Answer:** 2 uses of `parse_config` (defined at `utils.py:1:4`):"
    context = run_cq(
        "search", "where is it used?", "--root", str(tree), "--context", "I read parse_config"
    )
    assert context.returncode == 0, context.stderr
    assert uses in context.stdout.splitlines(), context.stdout
    said = "`it` read as `parse_config`, the name `--context` gave: searched as that name"
    assert said in context.stdout.splitlines(), context.stdout
    data = run_cq(
        *("search", "where is it used?", "--root", str(tree), "--format", "json"),
        *("--context", "I read parse_config"),
    ).json()
    assert data["summary"]["subject"] == "parse_config" and data["answer"]["kind"] == "uses"
    run_cq("search", "parse_config", "--root", str(tree), "--follow-up")
    followed = run_cq("search", "where is it used?", "--root", str(tree), "--follow-up")
    assert uses in followed.stdout.splitlines(), followed.stdout


def test_a_rewritten_follow_up_keeps_the_owner_for_the_next(tmp_path: Path) -> None:
    """``Schema.load``, then "where is it tested?" (rewritten around `Schema.load`, answered
    by ``load``), then "who calls it?": still ``Schema.load``'s calls, not every ``load``'s."""
    tree = write_tree(tmp_path, OWNED)
    run_cq("search", "Schema.load", "--root", str(tree), "--follow-up")
    argv = ("search", "where is it tested?", "--root", str(tree), "--follow-up")
    between = run_cq(*argv, "--format", "json").json()
    assert between["summary"]["rewrite"] and between["answer"]["name"] == "load"
    followed = run_cq("search", "who calls it?", "--root", str(tree), "--follow-up")
    answer = followed.stdout.split("\n\n")[1]
    assert "callsites of `Schema.load`" in answer.splitlines()[0], followed.stdout
    assert "loader.py" not in answer, answer


def test_a_context_naming_no_code_is_said_to_name_none(tmp_path: Path) -> None:
    """ "who calls it?" with a ``--context`` that names no code: the hint says the context
    named none, not to give one (it was given)."""
    tree = write_tree(tmp_path, FILES)
    run = run_cq("search", "who calls it?", "--root", str(tree), "--context", "the thing we saw")
    assert run.returncode == 1, run.stderr
    hint = next(line for line in run.stdout.splitlines() if line.startswith(HINT))
    said = "the `--context` given names no code; write the name there as the code spells it."
    assert hint == f"{HINT}: {said}"
