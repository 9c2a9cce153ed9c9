"""A one-line question answered without the index: the definition whose name is the
question's words ("how are buckets created?" -> ``create_bucket``) answers, not a longer
name ranked first by its file's evidence (``_create_underlying_bucket``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

TREE = {
    # a file holding many of the guessed names, so its definitions rank first
    "svc/tables.py": (
        "class Table:\n    def _create_underlying_bucket(self):\n"
        "        return self.backend.create_table_storage_bucket()\n\n\n"
        "class TablesBackend:\n    def create_table_bucket(self, name):\n"
        "        return Table()\n\n    def create_table_storage_bucket(self):\n"
        "        return None\n"
    ),
    "svc/store.py": (
        "class StoreBackend:\n    def create_bucket(self, bucket_name):\n"
        "        return bucket_name\n"
    ),
}


def test_the_definition_named_by_the_question_answers(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    run = run_cq(
        "search", "how are buckets created?", "--root", str(tmp_path), "--no-index", "--no-semantic"
    )
    assert run.returncode == 0, run.stderr
    answer = run.stdout.split("\n\n")[1]
    assert answer.startswith("**Answer:** `create_bucket`"), answer
    assert "`svc/store.py:2:" in answer, answer


def test_with_the_index_the_function_named_by_the_question_answers(tmp_path: Path) -> None:
    """The index's Relevant Functions score ``_create_underlying_bucket`` high by its file's
    evidence; the function whose name is exactly the question's words is the best Answer
    among them (``answer_score``) and answers."""
    write_tree(tmp_path, TREE)
    built = run_cq("index", "--root", str(tmp_path))
    assert built.returncode == 0, built.stderr
    run = run_cq(
        "search",
        "how are buckets created?",
        "--root",
        str(tmp_path),
        "--no-semantic",
        "--format",
        "json",
    )
    assert run.returncode == 0, run.stderr
    data = run.json()
    functions = next(s for s in data["sections"] if "functions" in s)["functions"]
    best = max(functions, key=lambda f: f["answer_score"])
    assert best["name"] == "svc/store.py::StoreBackend.create_bucket", functions[:3]
    assert "its name is the question's words" in best["evidence"]
    assert (data["answer"]["file"], data["answer"]["name"]) == ("svc/store.py", "create_bucket")
