"""A callers question counts every direct call the search found in the tree, not only the
shown ones: the Answer's count (markdown and JSON's ``answer.total``) covers the calls beyond
``--limit``, and calls on another receiver (a client library's method of the same name,
passing keywords the definition does not take) are told apart among those too. Real ``cq``
runs over trees built in ``tmp_path``."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

MODELS = (
    "class S3Backend:\n    def create_bucket(self, bucket_name, region_name):\n"
    "        return bucket_name\n"
)
CALLER = (
    "from svc.models import S3Backend\n\n\ndef put_{i}(backend: S3Backend, name):\n"
    "    return backend.create_bucket(name, 'us-east-1')\n"
)
CLIENT = (
    "import boto3\n\n\ndef test_create_{i}():\n    client = boto3.client('s3')\n"
    "    client.create_bucket(Bucket='b{i}')\n"
)


def _tree(root: Path) -> Path:
    files = {"svc/models.py": MODELS}
    files |= {f"svc/api_{i}.py": CALLER.format(i=i) for i in range(8)}
    files |= {f"tests/test_s3_{i}.py": CLIENT.format(i=i) for i in range(5)}
    return write_tree(root, files)


def test_the_callers_answer_counts_the_calls_beyond_the_shown_ones(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    args = ("search", "who calls create_bucket?", "--root", str(root), "--limit", "4")
    data = run_cq(*args, "--format", "json", "--no-semantic").json()
    answer = data["answer"]
    assert answer["kind"] == "callers", answer
    assert len(answer["calls"]) < 8  # the limit cut them
    assert answer["total"] == 8, answer  # the five client calls are not counted
    head = run_cq(*args, "--no-semantic").stdout.splitlines()[2]
    shown = len(answer["calls"])
    assert head.startswith(f"**Answer:** 8 callsites of `create_bucket` in the tree, {shown} shown")
    assert "5 calls beyond the shown ones pass keywords it does not take" in head, head


def test_all_calls_shown_say_no_more_than_before(tmp_path: Path) -> None:
    """With every call shown the Answer reads as it did: no count beyond the shown ones."""
    root = _tree(tmp_path)
    args = ("search", "who calls create_bucket?", "--root", str(root), "--no-semantic")
    data = run_cq(*args, "--format", "json").json()
    assert data["answer"]["total"] == 8 == len(data["answer"]["calls"]), data["answer"]
    head = run_cq(*args).stdout.splitlines()[2]
    assert head.startswith("**Answer:** 8 shown callsites of `create_bucket`"), head
    assert "in the tree" not in head and "beyond the shown" not in head, head
