"""cq's syntax fallback for callsites Pyrefly leaves unresolved (``cq.semantic.syntax_resolve``):
what it follows exactly, and where it must say nothing rather than guess.

The rules are checked on real searches (rg, classification) with the resolver run on their
callsites; the stage's use of it, beside the real Pyrefly, is in ``test_semantic_fallback.py``.
"""

from __future__ import annotations

from pathlib import Path

from cq.model import SearchRequest
from cq.parse import Corpus
from cq.pipeline import run_search
from cq.semantic.syntax_resolve import SyntaxResolver
from tests.conftest import write_tree


def _resolved(root: Path, query: str) -> dict[tuple[str, int], tuple[str, int] | None]:
    """Each callsite of ``query``: (file, line) -> the (file, line) it resolves to, or None."""
    result = run_search(SearchRequest(query=query, root=str(root), semantic=False, limit=0))
    corpus = Corpus(root)
    resolver = SyntaxResolver(str(root), lambda rel: corpus.source(rel, "python"))
    out: dict[tuple[str, int], tuple[str, int] | None] = {}
    for f in result.findings:
        if f.category == "callsite":
            found = resolver.resolve(f)
            assert found is None or found.via == "syntax"
            out[(f.file, f.line)] = (found.file, found.line) if found and found.file else None
    assert out, result.findings
    return out


def _line(text: str, needle: str, nth: int = 1) -> int:
    hits = [i for i, line in enumerate(text.split("\n"), 1) if needle in line]
    return hits[nth - 1]


CLASSES = """\
class Base:
    def save(self):
        return 0


class Left(Base):
    def save(self):
        return 1


class Right(Base):
    def save(self):
        return 2

    def name(cls):
        return "right"


class Both(Left, Right):
    def save(self):
        return super().save()

    def run(self):
        self.save()
        Right.save(self)
        return Both().save()
"""


def test_self_super_and_class_calls_follow_the_c3_order(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "r", {"shapes.py": CLASSES})
    got = _resolved(root, "save")
    left, right, both = (_line(CLASSES, "def save", n) for n in (2, 3, 4))
    assert got[("shapes.py", _line(CLASSES, "super().save()"))] == ("shapes.py", left)
    assert got[("shapes.py", _line(CLASSES, "self.save()"))] == ("shapes.py", both)
    assert got[("shapes.py", _line(CLASSES, "Right.save(self)"))] == ("shapes.py", right)
    assert got[("shapes.py", _line(CLASSES, "Both().save()"))] == ("shapes.py", both)


UNCERTAIN = """\
from outside import Model

try:
    from speedups import helper
except ImportError:
    def helper():
        return None


class Thing(Model):
    def local(self):
        return 1

    @property
    def size(self):
        return 2

    def use(self):
        self.local()
        self.inherited()
        self.size()
        helper()


class Holder:
    def __init__(self):
        self.hook = print

    def hook(self):
        return 3

    def go(self):
        self.hook()


def untyped(client):
    client.local()
"""


def test_uncertain_bindings_get_no_answer(tmp_path: Path) -> None:
    """A base class outside the root before the method, a property, an instance attribute
    of the same name, a name bound in a branch, an untyped parameter: no answer at all."""
    root = write_tree(tmp_path / "r", {"thing.py": UNCERTAIN})
    local = _resolved(root, "local")
    assert local[("thing.py", _line(UNCERTAIN, "self.local()"))] == (
        "thing.py",
        _line(UNCERTAIN, "def local"),
    )  # found in the class itself, before the outside base
    assert local[("thing.py", _line(UNCERTAIN, "client.local()"))] is None
    assert set(_resolved(root, "inherited").values()) == {None}
    assert set(_resolved(root, "size").values()) == {None}
    assert set(_resolved(root, "hook").values()) == {None}
    assert set(_resolved(root, "helper").values()) == {None}


def test_imports_and_star_imports_are_followed_into_the_root(tmp_path: Path) -> None:
    impl = '__all__ = ["work"]\n\n\ndef work():\n    return 1\n\n\ndef _hidden():\n    return 2\n'
    use = (
        "import os\n\nimport pkg.impl as impl\nfrom pkg import work\n\n"
        "work()\nimpl.work()\nos.getcwd()\n"
    )
    root = write_tree(
        tmp_path / "r",
        {"pkg/__init__.py": "from .impl import *\n", "pkg/impl.py": impl, "use.py": use},
    )
    target = ("pkg/impl.py", _line(impl, "def work"))
    got = _resolved(root, "work")
    assert got[("use.py", _line(use, "work()"))] == target
    assert got[("use.py", _line(use, "impl.work()"))] == target
    assert set(_resolved(root, "getcwd").values()) == {None}  # the stdlib is outside the root


CLIENT = """\
class BaseClient:
    def post(self, query):
        return query


class ApiClient(BaseClient):
    def post_graphql(self, query):
        return self.post(query)


class OtherClient:
    def post_graphql(self, query):
        return None
"""
FIXTURES = """\
import pytest

from pkg.client import ApiClient


@pytest.fixture
def api_client():
    return ApiClient()


@pytest.fixture
def built():
    client = ApiClient()
    return client


@pytest.fixture
def maybe(request):
    return request.param
"""
NEAR = """\
import pytest

from pkg.client import OtherClient


@pytest.fixture
def api_client():
    yield OtherClient()
"""
TEST = """\
import pytest


def test_post(api_client, built, maybe):
    api_client.post_graphql("q")
    built.post_graphql("q")
    maybe.post_graphql("q")


@pytest.mark.parametrize("api_client", [None])
def test_parametrized(api_client):
    api_client.post_graphql("q")


def helper(api_client):
    api_client.post_graphql("q")
"""


def test_pytest_fixtures_resolve_by_pytests_lookup(tmp_path: Path) -> None:
    """Plugins named by the root conftest's ``pytest_plugins``, overridden by a nearer
    ``conftest.py``; a parametrized name, a fixture of unknown value and a parameter of a
    function pytest does not call get no answer."""
    root = write_tree(
        tmp_path / "r",
        {
            "conftest.py": 'pytest_plugins = ["pkg.fixtures"]\n',
            "pkg/__init__.py": "",
            "pkg/client.py": CLIENT,
            "pkg/fixtures.py": FIXTURES,
            "tests/test_far.py": TEST,
            "tests/near/conftest.py": NEAR,
            "tests/near/test_near.py": TEST,
        },
    )
    got = _resolved(root, "post_graphql")
    api = ("pkg/client.py", _line(CLIENT, "def post_graphql", 1))
    other = ("pkg/client.py", _line(CLIENT, "def post_graphql", 2))
    far, near = "tests/test_far.py", "tests/near/test_near.py"
    assert got[(far, _line(TEST, "api_client.post_graphql", 1))] == api
    assert got[(far, _line(TEST, "built.post_graphql"))] == api
    assert got[(near, _line(TEST, "api_client.post_graphql", 1))] == other
    assert got[(near, _line(TEST, "built.post_graphql"))] == api
    for file in (far, near):
        assert got[(file, _line(TEST, "maybe.post_graphql"))] is None
        assert got[(file, _line(TEST, "api_client.post_graphql", 2))] is None  # parametrized
        assert got[(file, _line(TEST, "api_client.post_graphql", 3))] is None  # not a test
