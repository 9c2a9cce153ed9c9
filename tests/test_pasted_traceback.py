"""A pasted traceback or panic is answered by the code the tree holds of it.

A Python traceback met in the user's program (its frames in the user's code and a client
library, none in the tree) ended with a message the tree raises verbatim; it was rewritten into
the names its frames and words guess (``put_object``, ``_bucket_response_put``) and the raise
site was not the Answer, though the message pasted alone answers it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

STORE = {
    "store/exceptions.py": (
        "class StoreError(Exception):\n    pass\n\n\n"
        "class MissingBucket(StoreError):\n    def __init__(self, bucket):\n"
        '        super().__init__("The specified bucket does not exist")\n'
        "        self.bucket = bucket\n"
    ),
    # the traceback's words and frame names, which a rewrite guesses
    "store/responses.py": (
        "class Response:\n    def put_object(self, bucket, key, body):\n"
        "        return self._bucket_response_put(bucket, key, body)\n\n"
        "    def _bucket_response_put(self, bucket, key, body):\n"
        "        return self.make_api_call(bucket, key, body)\n\n"
        "    def make_api_call(self, operation_name, kwargs, error_class=None):\n"
        "        return operation_name, kwargs, error_class\n"
    ),
    "tests/test_buckets.py": (
        'def test_missing():\n    assert "The specified bucket does not exist" in str(missing())\n'
    ),
}

TRACEBACK = """Traceback (most recent call last):
  File "/home/me/app.py", line 12, in <module>
    client.put_object(Bucket="mybucket", Key="k", Body=b"x")
  File "/usr/lib/python3/site-packages/botocore/client.py", line 553, in _api_call
    return self._make_api_call(operation_name, kwargs)
  File "/usr/lib/python3/site-packages/botocore/client.py", line 1009, in _make_api_call
    raise error_class(parsed_response, operation_name)
botocore.errorfactory.NoSuchBucket: An error occurred (NoSuchBucket) when calling the \
PutObject operation: The specified bucket does not exist
"""


def _answer(tree: Path, query: str) -> str:
    run = run_cq("search", query, "--root", str(tree), "--no-semantic")
    assert run.returncode == 0, run.stderr
    return run.stdout.split("\n\n")[1]


def test_a_traceback_from_outside_the_tree_is_answered_by_the_code_raising_its_message(
    tmp_path: Path,
) -> None:
    write_tree(tmp_path, STORE)
    answer = _answer(tmp_path, TRACEBACK)
    assert answer.startswith("**Answer:** `MissingBucket.__init__` raises it"), answer
    assert "`store/exceptions.py:7:" in answer, answer
