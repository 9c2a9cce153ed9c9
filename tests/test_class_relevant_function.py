"""A class can be a Relevant Function and the Answer when the question names it: "where is
the botocore stubber class" asks for ``BotocoreStubber`` itself (its name is exactly the
question's words, the kind word aside), not the method of it whose text holds most of the
words, while every class the question does not name stays out of the list (where a function
lives, not where to start). Real ``cq`` over a tree built in ``tmp_path``, with its index."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

STUBBER = '''import re


class BotocoreStubber:
    """Answers botocore's requests with the registered responses instead of sending them."""

    def __init__(self):
        self.enabled = False
        self.methods = {}

    def register_response(self, method, pattern, response):
        self.methods.setdefault(method, []).append((re.compile(pattern), response))

    def __call__(self, event_name, request, **kwargs):
        """The botocore stubber's hook: find the registered response of the request."""
        if not self.enabled:
            return None
        for pattern, response in self.methods.get(request.method, []):
            if pattern.match(request.url):
                return response(request)
        return None
'''
OTHER = '''class {name}:
    """A {word} of the mock."""

    def handle(self, request):
        return request
'''


def _tree(root: Path) -> Path:
    files = {"mock/core/botocore_stubber.py": STUBBER}
    for i, (name, word) in enumerate((("Responder", "responder"), ("Patcher", "patcher"))):
        files[f"mock/core/part_{i}.py"] = OTHER.format(name=name, word=word)
    return write_tree(root, files)


def _ask(root: Path, cache: Path, query: str) -> dict:  # type: ignore[type-arg]
    env = {"CQ_CACHE_DIR": str(cache)}
    assert run_cq("index", "--root", str(root), env=env).returncode == 0
    run = run_cq("search", query, "--root", str(root), "--format", "json", env=env)
    assert run.returncode == 0, run.stderr
    return run.json()


def test_a_class_the_question_names_is_the_answer(tmp_path: Path) -> None:
    data = _ask(_tree(tmp_path / "root"), tmp_path / "cache", "where is the botocore stubber class")
    assert data["summary"]["telemetry"]["index"].get("files") == 3  # answered with its index
    answer = data["answer"]
    assert (answer["name"], answer["file"], answer["line"]) == (
        "BotocoreStubber",
        "mock/core/botocore_stubber.py",
        4,
    ), answer
    functions = next(s["functions"] for s in data["sections"] if s["type"] == "functions")
    names = [fn["name"].split("::", 1)[1] for fn in functions]
    assert "BotocoreStubber" in names
    assert "Responder" not in names and "Patcher" not in names  # classes it does not name


def test_a_class_the_question_does_not_name_stays_out(tmp_path: Path) -> None:
    data = _ask(_tree(tmp_path / "root"), tmp_path / "cache", "how are registered responses found?")
    functions = next(s["functions"] for s in data["sections"] if s["type"] == "functions")
    names = [fn["name"].split("::", 1)[1] for fn in functions]
    assert names and not any("." not in n and n[:1].isupper() for n in names), names


UTILS = '''import datetime as dt


def from_timestamp(value):
    """A datetime from a timestamp field's value; very large values overflow."""
    if value is True or value is False:
        raise ValueError("Not a valid POSIX timestamp")
    value = float(value)
    if value < 0:
        raise ValueError("Not a valid POSIX timestamp")
    return dt.datetime.fromtimestamp(value, tz=dt.timezone.utc)
'''
ERRORS = '''class ValidationError(Exception):
    """Raised when validation fails on a field or schema: the error a field crashes with
    when its value is invalid, large or not."""

    def __init__(self, message, field_name="_schema"):
        self.messages = [message]
        self.field_name = field_name
'''


def test_a_class_a_title_writes_as_code_is_no_answer(tmp_path: Path) -> None:
    """A bug report's title naming the exception it expected is not about that class."""
    root = write_tree(tmp_path / "root", {"lib/utils.py": UTILS, "lib/exceptions.py": ERRORS})
    title = (
        "Timestamp field crashes with OverflowError on very large values instead of ValidationError"
    )
    data = _ask(root, tmp_path / "cache", title)
    assert data["answer"]["name"] != "ValidationError", data["answer"]
    functions = next(s["functions"] for s in data["sections"] if s["type"] == "functions")
    assert "lib/exceptions.py::ValidationError" not in [fn["name"] for fn in functions]
