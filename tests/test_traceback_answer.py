"""A pasted traceback answered without the index: the innermost frame in the tree answers
(where the error was raised), not an outer frame that rank put first."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

# the outer frames' file holds more of the traceback's names, so its definitions rank first
TREE = {
    "store/responses.py": (
        "class Response:\n"
        "    def key_response(self, request):\n"
        "        return self._key_response(request)\n\n"
        "    def _key_response(self, request):\n"
        "        return self.get_object(request)\n\n"
        "    def get_object(self, request):\n"
        "        return self.backend.get_object(request.bucket, request.key)\n"
    ),
    "store/models.py": (
        "class MissingBucket(Exception):\n    pass\n\n\n"
        "class Backend:\n"
        "    def __init__(self):\n        self.buckets = {}\n\n"
        "    def get_bucket(self, name):\n"
        "        if name in self.buckets:\n            return self.buckets[name]\n"
        "        raise MissingBucket(name)\n"
    ),
}

TRACEBACK = """get_object on a missing bucket raises MissingBucket

Traceback (most recent call last):
  File "/venv/lib/python3.12/site-packages/store/responses.py", line 3, in key_response
    return self._key_response(request)
  File "/venv/lib/python3.12/site-packages/store/responses.py", line 6, in _key_response
    return self.get_object(request)
  File "/venv/lib/python3.12/site-packages/store/models.py", line 12, in get_bucket
    raise MissingBucket(name)
store.models.MissingBucket: nope
"""


def test_the_innermost_frame_answers_without_the_index(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    run = run_cq("search", TRACEBACK, "--root", str(tmp_path), "--no-index", "--no-semantic")
    assert run.returncode == 0, run.stderr
    answer = run.stdout.split("\n\n")[1]
    assert answer.startswith("**Answer:** `get_bucket`"), answer
    assert "`store/models.py:9:" in answer, answer
