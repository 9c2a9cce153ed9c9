"""How a question's own words reach the index: English function words stay out, and a
word written apart from its number meets the name that spells them together."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

SCHEMA = '''class Nested:
    """A field holding another schema."""

    def deserialize(self, value):
        """Load the nested schema and collect its errors."""
        return self.schema.load(value)
'''
# Test names written as sentences: "are" and "how" are in every one of them.
TESTS = """def test_fields_are_copied():
    pass


def test_defaults_are_applied():
    pass


def test_errors_are_cleared():
    pass


def test_how_values_are_dumped():
    pass
"""
RFC = '''def parse_rfc2822(text):
    """Parse an RFC 2822 date."""
    return text


def parse_rfc3339(text):
    """Parse an RFC 3339 date."""
    return text
'''


def relevant_functions(root: Path, question: str) -> list[str]:
    run = run_cq("search", "-", "--root", str(root), "--format", "json", stdin=question)
    assert run.returncode in (0, 1), run.stderr
    section = next(s for s in run.json()["sections"] if s["type"] == "functions")
    return [f["name"] for f in section["functions"]]


def test_function_words_do_not_pick_test_names_written_as_sentences(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"lib/schema.py": SCHEMA, "tests/test_schema.py": TESTS})
    names = relevant_functions(root, "how are nested schemas loaded?")
    assert names == ["lib/schema.py::Nested.deserialize"]  # a class is not a function


def test_a_number_written_apart_meets_the_name_that_joins_it(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"dates/parse.py": RFC})
    for question, wanted in (
        ("how is a date parsed from an RFC 3339 string?", "parse_rfc3339"),
        ("how is a date parsed from an RFC-2822 string?", "parse_rfc2822"),
    ):
        run = run_cq("search", "-", "--root", str(root), "--format", "json", stdin=question)
        assert run.returncode == 0, run.stderr
        answer = run.json()["answer"]
        assert (answer["file"], answer["name"]) == ("dates/parse.py", wanted), (question, answer)


# The rewriter maps "schemas" and "validated" onto Schema and validate; the index finds the
# function whose docstring says all three words, under a name none of them spells.
WALK = '''class Schema:
    """Fields by name."""

    def __init__(self, fields):
        self.fields = fields

    def validate(self, data):
        """Check every field of the data."""
        return [name for name in self.fields if name not in data]


def walk(schema, data):
    """Nested schemas are validated here: each inner schema checks its own part of the data,
    and the errors are collected under the field's name."""
    errors = {}
    for name, inner in schema.fields.items():
        if isinstance(inner, Schema):
            errors[name] = inner.validate(data.get(name, {}))
    return errors
'''


def test_a_question_is_answered_by_its_first_relevant_function(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"shapes/schema.py": WALK})
    question = "how are nested schemas validated?"
    run = run_cq("search", "-", "--root", str(root), "--format", "json", stdin=question)
    data = run.json()
    first = next(s for s in data["sections"] if s["type"] == "functions")["functions"][0]
    assert first["name"] == "shapes/schema.py::walk"
    answer = data["findings"][data["summary"]["primary"]]
    assert (answer["file"], answer["line"], answer["text"]) == ("shapes/schema.py", 12, "walk")
    assert answer["line_text"][answer["col"] : answer["end_col"]] == "walk"
    md = run_cq("search", "-", "--root", str(root), stdin=question).stdout
    assert "**Answer:** `walk` defined at `shapes/schema.py:12:4`" in md
    # A question about callers keeps the function it names as the answer.
    callers = run_cq(
        "search", "who calls validate?", "--root", str(root), "--format", "json"
    ).json()
    assert callers["findings"][callers["summary"]["primary"]]["text"] == "validate"


def test_a_question_about_a_name_itself_is_answered_by_its_definition(tmp_path: Path) -> None:
    """ "where is Nested defined?" asks for the class, not for the best function of its
    words (the method ``Nested.deserialize``, which Relevant Functions still lists)."""
    write_tree(tmp_path, {"shapes/schema.py": SCHEMA, "tests/test_schema.py": TESTS})
    for question in ("where is Nested defined?", "how is Nested used?"):
        md = run_cq("search", question, "--root", str(tmp_path)).stdout
        answer = next(ln for ln in md.splitlines() if ln.startswith("**Answer:**"))
        assert answer.startswith(
            "**Answer:** `Nested` — `class Nested:` defined at `shapes/schema.py:1:6`"
        ), answer
    md = run_cq("search", "how does a nested schema load its errors?", "--root", str(tmp_path))
    answer = next(ln for ln in md.stdout.splitlines() if ln.startswith("**Answer:**"))
    assert "`deserialize`" in answer, answer  # a question about words: the best function


READER = '''def read_elements_from_file(fp):
    """Every element of a file, in order."""
    return [line.split("=") for line in fp]
'''
WRITER = '''def write_elements(fp, elements):
    """Each element as one key=value line."""
    for key, value in elements:
        fp.write(f"{key}={value}\\n")
'''


def test_an_irregular_verb_meets_the_names_of_its_base(tmp_path: Path) -> None:
    """ "written" is ``write``: no suffix rule leads there, and the reader's name, which says
    "elements" and "file", won the question before."""
    root = write_tree(tmp_path / "repo", {"codec/reader.py": READER, "codec/writer.py": WRITER})
    for question in ("how are elements written to a file?", "where are the elements written?"):
        names = relevant_functions(root, question)
        assert names[0] == "codec/writer.py::write_elements", (question, names)


TEMPLATES = '''class Template:
    """A page with holes."""

    def render(self, context):
        """Fill the holes from the context."""
        return self.source.format(**context)


def find_used_templates(root):
    """The templates a page includes."""
    return sorted(root.glob("*.html"))
'''


def test_an_inflected_word_meets_the_name_of_its_base(tmp_path: Path) -> None:
    """ "rendered" meets ``render``: the rewriter stems both alike ("render" was "rend",
    "rendered" "render"), and the index is asked the base of a one-line question's word."""
    root = write_tree(tmp_path / "repo", {"pages/template.py": TEMPLATES})
    question = "how are templates rendered?"
    run = run_cq("search", question, "--root", str(root), "--format", "json")
    assert "render" in run.json()["summary"]["rewrite"]["identifiers"]
    names = relevant_functions(root, question)
    assert names[0] == "pages/template.py::Template.render", names


EVAL = '''def eval_pipeline(stack, pipeline):
    """Run each element, feeding the next."""
    for element in pipeline.elements:
        stack = element.run(stack)
    return stack


class Pipeline:
    """Elements joined by pipes."""

    def __init__(self, elements):
        self.elements = elements

    def is_empty(self):
        return not self.elements
'''


def test_a_word_code_abbreviates_meets_the_abbreviated_name(tmp_path: Path) -> None:
    """ "evaluated" meets ``eval_pipeline``: code writes eval, args, config where a question
    spells the word out."""
    root = write_tree(tmp_path / "repo", {"engine/eval.py": EVAL})
    question = "how is a pipeline evaluated?"
    run = run_cq("search", question, "--root", str(root), "--format", "json")
    assert "eval_pipeline" in run.json()["summary"]["rewrite"]["identifiers"]
    assert relevant_functions(root, question)[0] == "engine/eval.py::eval_pipeline"


ALLOCATORS = '''class SlotAllocator:
    def allocate(self, name, size):
        """The first ``size`` free slots for ``name``, counted from the left."""
        slots = self.free[:size]
        self.free = self.free[size:]
        return slots


class DimAllocator:
    def allocate(self, name, dim):
        """The first free dim for ``name``, counted from the right."""
        while dim in self.taken:
            dim -= 1
        self.taken.add(dim)
        return dim
'''


def test_a_spelled_out_dimension_meets_the_dim_code_writes(tmp_path: Path) -> None:
    """ "dimensions" meets ``DimAllocator``: code writes dim where a question says
    dimension; without it the allocator first in the file, which holds the question's other words
    (free, allocate) answered."""
    root = write_tree(tmp_path / "repo", {"lib/alloc.py": ALLOCATORS})
    question = "how are free dimensions allocated?"
    assert relevant_functions(root, question)[0] == "lib/alloc.py::DimAllocator.allocate"
