"""A pasted traceback or panic is answered by the code the tree holds of it.

A Python traceback met in the user's program (its frames in the user's code and a client
library, none in the tree) ended with a message the tree raises verbatim; it was rewritten into
the names its frames and words guess (``put_object``, ``_bucket_response_put``) and the raise
site was not the Answer, though the message pasted alone answers it. A Rust panic naming its
place (``panicked at src/parser/error.rs:7:9:``) whose filled-in message only a test asserts
was answered "No definition found", best hit the test, the format string at that place unread.
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


# the message a value was filled into is written whole only in a test asserting it
PANICKY = {
    "src/parser/error.rs": (
        "impl MatchesError {\n"
        "    pub fn unwrap<T>(id: &str, r: Result<T, MatchesError>) -> T {\n"
        "        let err = match r {\n            Ok(t) => return t,\n"
        "            Err(err) => err,\n        };\n"
        '        panic!("Mismatch between definition and access of `{id}`. {err}")\n'
        "    }\n}\n"
    ),
    "tests/matches.rs": (
        "#[test]\n"
        '#[should_panic = "Mismatch between definition and access of `o`. Unknown argument"]\n'
        'fn get_unknown() {\n    matches().get_one::<String>("o");\n}\n'
    ),
}


@pytest.mark.parametrize(
    "pasted",
    [
        "thread 'main' panicked at src/parser/error.rs:7:9:\n"
        "Mismatch between definition and access of `o`. Unknown argument\n"
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
        "thread 'main' panicked at 'Mismatch between definition and access of `o`. Unknown "
        "argument', src/parser/error.rs:7:9",
    ],
    ids=["since-1.73", "before-1.73"],
)
def test_a_panic_naming_its_place_is_answered_there_not_by_a_test_asserting_it(
    tmp_path: Path, pasted: str
) -> None:
    write_tree(tmp_path, PANICKY)
    answer = _answer(tmp_path, pasted)
    assert answer.startswith("**Answer:** `MatchesError::unwrap` raises it"), answer
    assert "`src/parser/error.rs:7:" in answer, answer


def test_a_panic_naming_a_place_that_writes_something_else_is_searched_as_before(
    tmp_path: Path,
) -> None:
    """Another version of the file: line 2 writes no such message, so the test is the hit."""
    write_tree(tmp_path, PANICKY)
    pasted = (
        "thread 'main' panicked at src/parser/error.rs:2:9:\n"
        "Mismatch between definition and access of `o`. Unknown argument\n"
    )
    run = run_cq("search", pasted, "--root", str(tmp_path), "--no-semantic")
    assert run.returncode == 0, run.stderr
    assert "`src/parser/error.rs:" not in run.stdout, run.stdout
