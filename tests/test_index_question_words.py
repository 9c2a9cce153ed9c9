"""How a question's own words reach the index: English function words stay out, and a
word written apart from its number meets the name that spells them together."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cq, write_tree

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
    assert names == ["lib/schema.py::Nested", "lib/schema.py::Nested.deserialize"]


def test_a_number_written_apart_meets_the_name_that_joins_it(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"dates/parse.py": RFC})
    for question, wanted in (
        ("how is a date parsed from an RFC 3339 string?", "parse_rfc3339"),
        ("how is a date parsed from an RFC-2822 string?", "parse_rfc2822"),
    ):
        names = relevant_functions(root, question)
        assert names[0] == f"dates/parse.py::{wanted}", (question, names)
