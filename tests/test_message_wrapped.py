"""A message a client library wraps in its own lead-in is answered by the code writing the
message, not by a format string that shares the lead-in.

botocore prints "An error occurred (NoSuchBucket) when calling the GetObject operation: The
specified bucket does not exist"; the tree writes only the last clause. Its pieces were
searched together, and a format string of the same lead-in elsewhere in the tree (an error
class imitating botocore's text) outnumbered and outranked the one raise of the message.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

TREE = {
    "store/errors.py": (
        "class StoreError(Exception):\n    pass\n\n\n"
        "class MissingBucket(StoreError):\n    def __init__(self):\n"
        '        super().__init__("The specified bucket does not exist")\n'
    ),
    # imitations of the client's lead-in, each with its own detail
    **{
        f"service{i}/errors.py": (
            "class BadRequest(Exception):\n    def __init__(self, op, detail):\n"
            "        super().__init__(\n"
            f'            f"An error occurred (BadRequest{i}) when calling the {{op}} '
            'operation: {detail}"\n        )\n'
        )
        for i in range(3)
    },
    "service0/calls.py": (
        "def call(client, op):\n"
        '    raise RuntimeError("An error occurred (Throttled) when calling the " + op)\n'
    ),
}
MESSAGE = (
    "An error occurred (NoSuchBucket) when calling the GetObject operation: "
    "The specified bucket does not exist"
)


def test_a_wrapped_message_is_answered_by_the_code_writing_its_own_clause(
    tmp_path: Path,
) -> None:
    root = write_tree(tmp_path / "repo", TREE)
    run = run_cq("search", MESSAGE, "--root", str(root), "--format", "json")
    assert run.returncode == 0, run.stderr
    data = run.json()
    answer = data["answer"]
    assert (answer["kind"], answer["file"]) == ("message", "store/errors.py"), answer
    assert data["summary"]["rewrite"] is None  # found as text, never rewritten into names
    assert {f["file"] for f in data["findings"]} == {"store/errors.py"}
