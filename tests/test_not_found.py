"""Never claim what was not found: a name no file holds exits 1 with "did you mean" names,
punctuation is never a definition, and an implementation answers before its stubs.
Real cq subprocesses on a small moto-like tree."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree

# what cq prints, not how it starts (forked_cli.py); one read-only tree, its cache warm
pytestmark = [pytest.mark.cli_forked, pytest.mark.shared_cache]

FILES = {
    "moto/s3/models.py": (
        "from moto.core.base import BaseBackend\n"
        "\n"
        "\n"
        "class OrderedDict(dict):\n"
        "    pass\n"
        "\n"
        "\n"
        "class S3Backend(BaseBackend):\n"
        "    def create_bucket(self, name):\n"
        "        return self.get_bucket(name)\n"
        "\n"
        "    def get_bucket(self, name):\n"
        "        return self.buckets[name]\n"
        "\n"
        "    def get_bucket_policy(self, name):\n"
        "        return self.get_bucket(name).policy\n"
        "\n"
        "    def put_bucket_policy(self, name, policy):\n"
        "        self.get_bucket(name).policy = policy\n"
    ),
    "moto/s3/responses.py": (
        "from moto.s3.models import S3Backend\n"
        "\n"
        "\n"
        "def create_user(backend: S3Backend, name):\n"
        '    """Create a user and a bucket for it."""\n'
        "    return backend.create_bucket(name)\n"
    ),
    "moto/core/base.py": "class BaseBackend:\n    buckets: dict = {}\n",
    "moto/core/decorator.py": (
        "from typing import Protocol, overload\n"
        "\n"
        "\n"
        "class Mocked(Protocol):\n"
        "    def start(self) -> None: ...\n"
        "\n"
        "\n"
        "@overload\n"
        "def mock_aws(func: int) -> int: ...\n"
        "@overload\n"
        "def mock_aws(func: None = None) -> str: ...\n"
        "def mock_aws(func=None):\n"
        "    return func\n"
        "\n"
        "\n"
        "class Recorder:\n"
        "    def start(self) -> None:\n"
        "        self.started = True\n"
    ),
    "moto/core/logs.py": (
        "class Manager:\n"
        "    def get_logger(self, name):\n"
        "        return get_logger(name)\n"
        "\n"
        "\n"
        "def get_logger(name):\n"
        "    return name\n"
    ),
    "crates/time/src/lib.rs": (
        "pub struct DateTime;\n"
        "\n"
        "impl DateTime {\n"
        "    pub fn parse_from_str(text: &str) -> Option<DateTime> {\n"
        "        None\n"
        "    }\n"
        "}\n"
    ),
    "tests/test_s3.py": (
        "from moto.s3.models import S3Backend\n"
        "\n"
        "\n"
        "def test_get_bucket():\n"
        "    S3Backend().get_bucket('b')\n"
    ),
}


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("moto"), FILES)


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("get_bukcet", "get_bucket"),  # a transposition
        ("getBucket", "get_bucket"),  # camel for snake: no edit at all
        ("OrderdDict", "OrderedDict"),  # a letter left out
        ("S3Backend.get_bukcet", "get_bucket"),  # a dotted name: its last name
        ("bucket_get", "get_bucket"),  # the same words in another order
        ("put_policy", "put_bucket_policy"),  # a word more
        ("get_loger", "get_logger"),  # its site: the module's function, not the method
        ("DateTime::parse_form_str", "parse_from_str"),  # Rust, a path
    ],
)
def test_a_name_no_file_holds_exits_1_with_did_you_mean(tree: Path, query: str, first: str) -> None:
    md = run_cq("search", query, "--root", str(tree))
    assert md.returncode == 1, md.stderr
    assert "**Answer:**" not in md.stdout
    lines = md.stdout.splitlines()
    assert lines[2].startswith("**Not found:**") and f"`{query}`" in lines[2]
    assert lines[3] == "Did you mean:"
    assert lines[4].startswith(f"- `{first}` — ")
    js = run_cq("search", query, "--root", str(tree), "--format", "json", "--no-index")
    assert js.returncode == 1
    data = js.json()
    assert data["findings"] == [] and data["summary"]["primary"] is None
    assert data["summary"]["rewrite"] is None  # nothing was guessed in its place
    best = data["summary"]["suggestions"][0]
    assert best["name"] == first
    # the definition site is where the tree really defines it
    text = (tree / best["file"]).read_text().splitlines()[best["line"] - 1]
    assert text[best["col"] :].startswith(first) and best["kind"] in text
    assert f"`{best['file']}:{best['line']}:{best['col']}`" in lines[4]
    if first == "get_logger":
        assert (best["file"], best["line"], best["col"]) == ("moto/core/logs.py", 6, 4)


def test_a_name_nothing_is_near_says_so_and_invents_no_answer(tree: Path) -> None:
    for extra in ((), ("--no-cache",), ("--no-index",)):
        run = run_cq("search", "nonexistent_name_xyz", "--root", str(tree), *extra)
        assert run.returncode == 1, run.stderr
        assert "**Answer:**" not in run.stdout and "create_user" not in run.stdout
        assert "No name defined in the searched scope is near it." in run.stdout
    data = run_cq("search", "nonexistent_name_xyz", "--root", str(tree), "--format", "json").json()
    assert data["summary"]["total_findings"] == 0 and data["summary"]["suggestions"] == []


def test_a_name_defined_in_a_file_whose_name_is_not_utf8_is_suggested(tmp_path: Path) -> None:
    write_tree(tmp_path, {"ok.py": "x = 1\n"})
    odd = tmp_path / "bad_\udcff.py"
    odd.write_bytes(b"def compute_totals(rows):\n    return sum(rows)\n")

    def suggested(query: str) -> tuple[str, str]:
        run = run_cq("search", query, "--root", str(tmp_path), "--format", "json")
        assert run.returncode == 1, run.stderr
        best = run.json()["summary"]["suggestions"][0]
        return best["name"], best["file"]

    assert suggested("compute_totls") == ("compute_totals", "bad_\udcff.py")
    odd.write_bytes(odd.read_bytes() + b"\n\ndef compute_average(rows):\n    return 0\n")
    assert suggested("compute_avrage") == ("compute_average", "bad_\udcff.py")  # not stale


def test_suggestions_stay_in_the_searched_scope(tree: Path) -> None:
    run = run_cq(
        "search", "get_bukcet", "--root", str(tree), "--in", "moto/core", "--format", "json"
    )
    assert run.returncode == 1
    assert all(s["file"].startswith("moto/core/") for s in run.json()["summary"]["suggestions"])


def test_a_found_name_has_no_suggestions_field(tree: Path) -> None:
    data = run_cq("search", "get_bucket", "--root", str(tree), "--format", "json").json()
    assert "suggestions" not in data["summary"]
    assert data["findings"][data["summary"]["primary"]]["line"] == 12


def test_the_schema_types_the_suggestions() -> None:
    schema = run_cq("schema").json()
    fields = schema["$defs"]["Suggestion"]["properties"]
    assert {"name", "kind", "file", "line", "col", "distance"} <= set(fields)
    assert "suggestions" in schema["$defs"]["Summary"]["properties"]


@pytest.mark.parametrize("query", ["(", "):", "->", "= "])
def test_punctuation_is_a_text_match_never_a_definition(tree: Path, query: str) -> None:
    run = run_cq("search", "--root", str(tree), "--format", "json", "--limit", "0", "--", query)
    data = run.json()
    if not data["findings"]:
        assert run.returncode == 1
        return
    code = {"definition", "callsite", "import", "from_import", "assignment", "reference"}
    assert not [f for f in data["findings"] if f["category"] in code]
    assert data["summary"]["primary"] is None
    md = run_cq("search", "--root", str(tree), "--", query).stdout
    assert "**Answer:**" not in md and "defined at" not in md.splitlines()[2]


def test_an_implementation_answers_before_its_overload_stubs(tree: Path) -> None:
    data = run_cq("search", "mock_aws", "--root", str(tree), "--format", "json").json()
    answer = data["findings"][data["summary"]["primary"]]
    assert (answer["file"], answer["line"]) == ("moto/core/decorator.py", 12)
    md = run_cq("search", "mock_aws", "--root", str(tree)).stdout
    assert "`moto/core/decorator.py:12:4`" in md.splitlines()[2]


def test_an_implementation_answers_before_a_protocol_member(tree: Path) -> None:
    data = run_cq("search", "start", "--root", str(tree), "--format", "json").json()
    answer = data["findings"][data["summary"]["primary"]]
    assert (answer["file"], answer["line"]) == ("moto/core/decorator.py", 17)


def test_a_name_found_ignoring_case_is_still_answered(tree: Path) -> None:
    data = run_cq("search", "GET_BUCKET", "-i", "--root", str(tree), "--format", "json").json()
    answer = data["findings"][data["summary"]["primary"]]
    assert (answer["file"], answer["line"], answer["text"]) == (
        "moto/s3/models.py",
        12,
        "get_bucket",
    )


def test_a_name_defined_in_a_file_whose_name_holds_a_newline_is_suggested(tmp_path: Path) -> None:
    write_tree(
        tmp_path, {"ok.py": "x = 1\n", "odd\nname.py": "def compute_totals(rows):\n    return 0\n"}
    )
    run = run_cq("search", "compute_totls", "--root", str(tmp_path), "--format", "json")
    assert run.returncode == 1, run.stderr
    best = run.json()["summary"]["suggestions"][0]
    assert (best["name"], best["file"]) == ("compute_totals", "odd\nname.py")


@pytest.mark.parametrize(
    ("query", "name", "first"),
    [
        ("where is `get_bukcet` called?", "get_bukcet", "get_bucket"),
        ("who calls get_bukcet?", "get_bukcet", "get_bucket"),
        (
            "where is `DateTime::parse_form_str` called?",
            "DateTime::parse_form_str",
            "parse_from_str",
        ),
    ],
)
def test_a_callers_question_about_a_name_no_file_holds_says_so_with_did_you_mean(
    tree: Path, query: str, name: str, first: str
) -> None:
    """A callers question is searched as the name it writes (its owner kept); when nothing
    matches, that name is the one nowhere, and its nearest defined names are offered."""
    md = run_cq("search", query, "--root", str(tree))
    assert md.returncode == 1, md.stderr
    assert "**Answer:**" not in md.stdout
    lines = md.stdout.splitlines()
    assert lines[2].startswith("**Not found:**") and f"`{name}`" in lines[2], md.stdout
    assert lines[3] == "Did you mean:"
    assert lines[4].startswith(f"- `{first}` — ")
    data = run_cq("search", query, "--root", str(tree), "--format", "json").json()
    assert data["findings"] == [] and data["summary"]["suggestions"][0]["name"] == first
    best = data["summary"]["suggestions"][0]
    text = (tree / best["file"]).read_text().splitlines()[best["line"] - 1]
    assert text[best["col"] :].startswith(first)


@pytest.mark.parametrize("query", ["models.py", "what does models.py do?", "s3/models.py"])
def test_a_file_name_is_named_as_the_trees_file_not_a_name_nothing_is_near(
    tree: Path, query: str
) -> None:
    """A file name no text holds is no identifier to guess at: the files of that name are
    offered, with how to search inside one."""
    md = run_cq("search", query, "--root", str(tree))
    assert md.returncode == 1, md.stderr
    assert "**Answer:**" not in md.stdout and "No name defined in" not in md.stdout
    assert "- `moto/s3/models.py` — a file of the tree (`--in moto/s3/models.py`" in md.stdout
    data = run_cq("search", query, "--root", str(tree), "--format", "json").json()
    near = data["summary"]["suggestions"]
    assert [(s["kind"], s["file"]) for s in near] == [("file", "moto/s3/models.py")]
    assert (tree / near[0]["file"]).is_file()
    inside = run_cq("search", "get_bucket", "--root", str(tree), "--in", near[0]["file"])
    assert inside.returncode == 0 and "moto/s3/models.py" in inside.stdout


def test_a_cited_line_names_the_file_at_that_line_when_it_has_it(tree: Path) -> None:
    """``models.py:12`` (a traceback's or a linter's citation) is text no file holds: the
    file is offered at the line cited, or at its top when the file is shorter."""
    md = run_cq("search", "s3/models.py:12", "--root", str(tree))
    assert md.returncode == 1, md.stderr
    assert "holds `s3/models.py:12` as text." in md.stdout
    assert "- `moto/s3/models.py:12` — a file of the tree" in md.stdout
    data = run_cq("search", "models.py:12:9", "--root", str(tree), "--format", "json").json()
    (near,) = data["summary"]["suggestions"]
    line = (tree / near["file"]).read_text().splitlines()[near["line"] - 1]
    assert near["line"] == 12 and "def get_bucket" in line
    beyond = run_cq("search", "models.py:999", "--root", str(tree), "--format", "json").json()
    assert [s["line"] for s in beyond["summary"]["suggestions"]] == [1]


@pytest.mark.parametrize(
    ("query", "kind"),
    [("where is getBucket defined?", "definition"), ("who calls getBucket?", "callers")],
)
def test_a_question_about_a_name_in_another_spelling_is_answered_in_the_trees(
    tree: Path, query: str, kind: str
) -> None:
    """A question about ``getBucket``, which no file holds, when the tree defines the same
    words as one name (``get_bucket``): answered about that name, and the report says it
    searched the tree's spelling instead (the name typed alone stays not found, above)."""
    md = run_cq("search", query, "--root", str(tree))
    assert md.returncode == 0, md.stderr
    assert "**Answer:**" in md.stdout and "Not found" not in md.stdout, md.stdout
    note = "asked about `getBucket`, which no file holds: searched as `get_bucket`"
    assert note in md.stdout, md.stdout
    data = run_cq("search", query, "--root", str(tree), "--format", "json").json()
    answer, summary = data["answer"], data["summary"]
    assert (answer["kind"], answer["name"]) == (kind, "get_bucket"), answer
    assert (summary["asked_name"], summary["respelled"]) == ("get_bucket", "getBucket")
    if kind == "definition":
        assert (answer["file"], answer["line"]) == ("moto/s3/models.py", 12), answer


@pytest.mark.parametrize(
    "body",
    [
        "    @abstractmethod\n    def load(self, data):\n        pass\n",
        "    @abc.abstractmethod\n    def load(self, data):\n        '''Load data.'''\n",
        "    def load(self, data):\n        raise NotImplementedError\n",
        "    def load(self, data):\n        raise NotImplementedError('subclasses load')\n",
    ],
)
def test_an_implementation_answers_before_its_abstract_declaration(
    tmp_path: Path, body: str
) -> None:
    """``SchemaABC.load`` only declares what ``Schema.load`` does: a base class's abstract
    method (``pass`` under ``@abstractmethod``, or a body that raises NotImplementedError)
    is not the Answer when the implementation is shown; a plain ``pass`` may be a hook."""
    write_tree(
        tmp_path,
        {
            "lib/base.py": (
                "import abc\nfrom abc import ABC, abstractmethod\n\n\n"
                f"class SchemaABC(ABC):\n{body}"
            ),
            "lib/schema.py": (
                "from lib.base import SchemaABC\n\n\nclass Schema(SchemaABC):\n"
                "    def load(self, data):\n        return dict(data)\n"
            ),
        },
    )
    md = run_cq("search", "-w", "load", "--root", str(tmp_path)).stdout
    answer = md.split("\n\n")[1].splitlines()[0]
    assert answer.startswith("**Answer:** `load`"), md
    assert "defined at `lib/schema.py:5:8` in `Schema`" in answer, md


def test_a_name_defined_outside_the_scope_searched_is_not_said_to_be_nowhere(
    tmp_path: Path,
) -> None:
    """``--in docs`` of a tree whose code defines the name: nothing near it *in that scope*,
    not "the tree defines none" (it does)."""
    write_tree(tmp_path, {"pkg/store.py": "def get_bucket():\n    pass\n", "docs/x.py": "a = 1\n"})
    run = run_cq("search", "get_bucket", "--root", str(tmp_path), "--in", "docs")
    assert run.returncode == 1, run.stderr
    assert "No name defined in the searched scope is near it." in run.stdout.splitlines()
