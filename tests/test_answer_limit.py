"""``--limit`` says how many findings to show, not what the Answer is: a question whose
Answer's definition sits beyond a small limit in the fused order answers with the same
function as with the default limit (the Answer is read from the shown findings, so its
definition takes the last shown place). Real ``cq`` over a tree built in ``tmp_path``,
with its index."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

STORE = '''class Backend:
    def __init__(self):
        self.buckets = {}

    def create_bucket(self, bucket_name, region_name):
        """Store a new bucket under its name."""
        bucket = {"name": bucket_name, "region": region_name}
        self.buckets[bucket_name] = bucket
        return bucket

    def delete_bucket(self, bucket_name):
        return self.buckets.pop(bucket_name)
'''
TABLES = '''from store.models import Backend


class Table:
    def __init__(self, name):
        self.name = name
        self.bucket = self._create_underlying_bucket()

    def _create_underlying_bucket(self):
        """The table's bucket: created when the table is created, named after it."""
        backend = Backend()
        return backend.create_bucket("table-bucket-" + self.name, "us-east-1")


class TableBucket:
    def create_table_bucket(self, name):
        """A table bucket is created with its tables' buckets."""
        return Table(name).bucket
'''
QUESTION = "how are buckets created?"


def test_a_small_limit_answers_with_the_same_function(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "root", {"store/models.py": STORE, "tables/models.py": TABLES})
    env = {"CQ_CACHE_DIR": str(tmp_path / "cache")}
    assert run_cq("index", "--root", str(root), env=env).returncode == 0

    def ask(*limit: str) -> dict:  # type: ignore[type-arg]
        run = run_cq("search", QUESTION, "--root", str(root), "--format", "json", *limit, env=env)
        assert run.returncode == 0, run.stderr
        return run.json()

    full = ask()
    answer = full["answer"]
    assert (answer["name"], answer["file"], answer["line"]) == (
        "create_bucket",
        "store/models.py",
        5,
    )
    assert answer["finding"] > 0  # the case: the fused order puts another file's hits first
    for limit in ("1", "2"):
        cut = ask("--limit", limit)
        assert len(cut["findings"]) == int(limit)
        assert {k: cut["answer"][k] for k in ("name", "file", "line", "evidence")} == {
            k: answer[k] for k in ("name", "file", "line", "evidence")
        }, limit
