"""The semantic stage's readings beside Pyrefly, on small fixture trees with the real
``pyrefly lsp`` and the real CLI: cq's syntax fallback (``via: syntax``) for a pytest fixture
Pyrefly cannot type, and the unique-name reading (``via: unique-name``) for a method call
nobody can type; how callers and dotted questions count them. The rules alone, without a
server, are in ``test_semantic_syntax.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cq, write_tree
from tests.semantic_cli import (
    ANSWER_BUDGET,
    line_of,
    search_json,
    semantic_of,
    semantic_on,  # noqa: F401  (autouse: applies by being imported)
)

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

FIXTURE_CLIENT = """\
class ApiClient:
    def post_graphql(self, query: str) -> str:
        return query


def make() -> ApiClient:
    return ApiClient()
"""
FIXTURE_TEST = """\
import pytest

from pkg.client import ApiClient, make


@pytest.fixture
def api_client():
    return ApiClient()


def test_query(api_client):
    api_client.post_graphql("q")


def test_typed():
    make().post_graphql("q")


def untyped(client):
    client.post_graphql("q")
"""


def _fixture_tree(tmp_path: Path) -> Path:
    return write_tree(
        tmp_path / "repo",
        {"pkg/__init__.py": "", "pkg/client.py": FIXTURE_CLIENT, "tests/test_q.py": FIXTURE_TEST},
    )


def test_a_fixture_call_pyrefly_cannot_type_resolves_by_syntax(tmp_path: Path) -> None:
    """Pyrefly has no type for a pytest fixture parameter; cq's syntax fallback follows the
    fixture to the class it returns, marked ``via: syntax``. A call Pyrefly resolves keeps its
    answer, and on an untyped parameter of a plain function it is the root's one method of
    that name, the weaker reading marked ``via: unique-name``."""
    root = _fixture_tree(tmp_path)
    result = search_json(root, "post_graphql", env=ANSWER_BUDGET)
    calls = {f["line"]: f for f in result["findings"] if f["category"] == "callsite"}
    target = line_of(FIXTURE_CLIENT, "def post_graphql")
    place = {"file": "pkg/client.py", "line": target, "col": 8}
    fixture = semantic_of(calls[line_of(FIXTURE_TEST, "api_client.post_graphql")])
    assert fixture["status"] == "applied"
    assert fixture["definition"] == {**place, "via": "syntax"}
    typed = semantic_of(calls[line_of(FIXTURE_TEST, "make().post_graphql")])
    assert typed["definition"] == {**place, "via": "pyrefly"}
    untyped = semantic_of(calls[line_of(FIXTURE_TEST, " client.post_graphql")])
    assert untyped["definition"] == {**place, "via": "unique-name"}
    defined = [f for f in result["findings"] if (f["file"], f["line"]) == ("pkg/client.py", target)]
    assert [f["category"] for f in defined] == ["definition"]
    md = run_cq("search", "post_graphql", "--root", str(root), env=ANSWER_BUDGET).stdout
    # every finding is in Top Contexts: the calls under where they resolve, each saying who
    # resolved it
    heading = f"### calls resolved to `pkg/client.py:{target}` (Pyrefly + syntax + unique name)"
    assert heading in md, md
    for line, by in (("api_client.post", "syntax"), (" client.post", "unique name")):
        bullet = f"`tests/test_q.py:{line_of(FIXTURE_TEST, line)}:"
        assert f", by {by} (test)" in next(x for x in md.splitlines() if bullet in x), md


def test_callers_and_dotted_questions_count_calls_resolved_by_syntax(tmp_path: Path) -> None:
    """The fixture call resolved by syntax and the untyped call read by its unique name are
    callers and uses of the dotted name, and the report says who resolved them."""
    root = _fixture_tree(tmp_path)
    run = run_cq("search", "who calls post_graphql", "--root", str(root), env=ANSWER_BUDGET)
    answer = run.stdout.split("\n\n")[1]
    assert answer.startswith("**Answer:** 3 shown callsites of `post_graphql`"), answer
    assert "resolved by Pyrefly + syntax + unique name:" in answer
    lead = search_json(root, "who calls post_graphql", env=ANSWER_BUDGET)["findings"][:3]
    assert [(f["category"], semantic_of(f)["definition"]["via"]) for f in lead] == [
        ("callsite", "syntax"),
        ("callsite", "pyrefly"),
        ("callsite", "unique-name"),
    ]
    dotted = search_json(root, "ApiClient.post_graphql", env=ANSWER_BUDGET)
    target = dotted["summary"]["telemetry"]["semantic.target"]
    assert (
        target["resolved_to_target"],
        target["resolved_to_target_by_syntax"],
        target["resolved_to_target_by_unique_name"],
    ) == (3, 1, 1)
    md = run_cq("search", "ApiClient.post_graphql", "--root", str(root), env=ANSWER_BUDGET).stdout
    expected = (
        "Pyrefly + syntax + unique name: 3 of 3 shown uses of `post_graphql` resolve to"
        f" `pkg/client.py:{line_of(FIXTURE_CLIENT, 'def post_graphql')}`"
        " `ApiClient.post_graphql` (1 by syntax, 1 by unique name), 0 to other definitions"
    )
    assert expected in md, md


def test_a_callers_question_naming_the_owner_lists_the_calls_resolved_to_it(
    tmp_path: Path,
) -> None:
    """For "who calls ApiClient.post_graphql", another class's method of the same name and
    its typed call are not callers, nor is the untyped call (two methods of that name now);
    the Answer names the owner the question named and says the calls were resolved (it said
    "matched by name, not resolved" beside Pyrefly's groups)."""
    root = _fixture_tree(tmp_path)
    other = "class Other:\n    def post_graphql(self, q):\n        return q\n\n\n"
    other += "def use() -> None:\n    Other().post_graphql('q')\n"
    write_tree(root, {"pkg/other.py": other})
    query = "who calls ApiClient.post_graphql?"
    md = run_cq("search", query, "--root", str(root), env=ANSWER_BUDGET).stdout
    answer = md.split("\n\n")[1]
    assert answer.startswith("**Answer:** 2 shown callsites of `ApiClient.post_graphql`"), md
    assert "resolved by Pyrefly + syntax:" in answer, answer
    assert "pkg/other.py" not in answer, answer
    said = search_json(root, query, env=ANSWER_BUDGET)["answer"]
    assert (said["kind"], said["name"]) == ("callers", "ApiClient.post_graphql")


UNIQUE_MODELS = """\
class Store:
    def save_meta(self, items):
        return items

    def join(self, parts):
        return parts

    def dumps(self):
        return ""

    def twice(self):
        return 1

    @property
    def sized(self):
        return len


class Other:
    def __init__(self):
        self.rebound = None

    def twice(self):
        return 2

    def rebound(self):
        return 3
"""
UNIQUE_USE = """\
import missing_package


def work(store, thing):
    store.save_meta({})
    store.join(["a"])
    store.dumps()
    store.twice()
    store.sized()
    thing.rebound()
    missing_package.client.save_meta({})
"""


def test_an_untyped_method_call_reads_the_roots_one_method_of_that_name(tmp_path: Path) -> None:
    """``x.m()`` on a receiver neither Pyrefly nor the syntax reading can type resolves to the
    root's one ``def m`` when it is a method and nothing else binds ``m``; a name the builtin
    types or typeshed define, a name defined twice or also assigned, a property and a receiver
    imported from a module outside the root all stay unresolved (Pyrefly typed every one of
    them ``Unknown``)."""
    root = write_tree(
        tmp_path / "repo",
        {"pkg/__init__.py": "", "pkg/models.py": UNIQUE_MODELS, "pkg/use.py": UNIQUE_USE},
    )
    names = r"\b(save_meta|join|dumps|twice|sized|rebound)\b"
    result = search_json(root, "--regex", names, env=ANSWER_BUDGET)
    calls = {f["line"]: semantic_of(f) for f in result["findings"] if f["file"] == "pkg/use.py"}
    assert set(calls) == set(range(5, 12)), result["findings"]
    save_meta = line_of(UNIQUE_MODELS, "def save_meta")
    place = {"file": "pkg/models.py", "line": save_meta, "col": 8}
    assert calls[5]["definition"] == {**place, "via": "unique-name"}
    for line in range(6, 12):
        assert calls[line]["status"] == "applied", calls[line]
        assert "Unknown" in calls[line]["type"], calls[line]
        assert "definition" not in calls[line], (line, calls[line])
