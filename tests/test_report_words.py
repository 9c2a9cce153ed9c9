"""The report's header speaks in words a user knows: how the query was searched, why and how
it was rewritten, what is still being worked out, never cq's internal names for them
(``mode literal``, ``rewritten by offline (zero_results)``, ``focus all``). Pyrefly's pending
answers ("types of 12 shown hits still being worked out") are in tests/test_semantic_budget.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

TREE = {
    "pkg/store.py": "def get_bucket(name):\n    return name.lower()\n",
    "tests/test_store.py": (
        "from pkg.store import get_bucket\n\n\ndef test_get_bucket():\n    get_bucket('A')\n"
    ),
}
INTERNAL = ("mode ", "(zero_results)", "(heuristic)", "rewritten by ", "Pyrefly answer", "focus ")


def header(repo: Path, *args: str) -> list[str]:
    """The lines between the Answer and the first section."""
    run = run_cq("search", *args, "--root", str(repo))
    assert run.returncode in (0, 1), run.stderr
    lines = run.stdout.split("\n## ", 1)[0].splitlines()
    start = next(i for i, line in enumerate(lines) if " shown" in line)
    return lines[start:]


def test_a_rewrite_after_no_results_is_told_in_plain_words(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", TREE)
    said = header(repo, "bucket getter")
    assert " · searched as text, then as the names below · " in said[0], said
    assert said[1] == (
        "no results for the words as typed, so they were rewritten offline into names: "
        "`get_bucket`, `test_get_bucket`"
    ), said
    assert not [w for w in INTERNAL if any(w in line for line in said)], said


def test_a_name_tried_as_text_and_a_focus_are_told_in_plain_words(tmp_path: Path) -> None:
    """(A question read as one: tests/test_rewrite_llm.py and test_report_quiet.py.)"""
    repo = write_tree(tmp_path / "repo", TREE)
    missed = header(repo, "bucket_names_lowered")
    assert " · searched as a name, then as text · " in missed[0], missed
    focused = header(repo, "get_bucket", "--focus", "tests")
    assert " · tests first · " in focused[0], focused
    for said in (missed, focused):
        assert not [w for w in INTERNAL if any(w in line for line in said)], said


def test_a_hit_left_unread_says_why_in_words(tmp_path: Path) -> None:
    """A deadline that left the shown hits unread: the hit's line says so with the reason,
    not cq's status word ("enrichment skipped")."""
    repo = write_tree(tmp_path, TREE)
    run = run_cq("search", "get_bucket", "--root", str(repo), env={"CQ_ENRICH_BUDGET_MS": "0.0001"})
    assert run.returncode == 0, run.stderr
    assert "not read (time budget)" in run.stdout.split("\n\n")[1], run.stdout
    assert "enrichment skipped" not in run.stdout
