"""Classifier cases found by ``bench/classify_accuracy.py`` (cq vs an ``ast`` + ``tokenize``
oracle on the stdlib), each one a category a user saw wrong before the fix."""

from __future__ import annotations

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

# No triple quotes and no backslash continuations: the line heuristic may skip the parse here,
# so it must not call an f-string hole or a one-line docstring a plain string.
LINE_LEXED = """\
class N:
    'Doc mentions needle'
    label = f'{needle(1)} and needle'
    plain = 'needle'
"""

PARSED = '''\
def f(items):
    "Doc of needle" """continued"""
    x = [*needle()]; print("=", x.b(), *items.needle())


def g(items):
    f"needle {items}"


match items:
    case {"k": needle}:
        pass
    case [1, *needle]:
        pass
    case P(needle=1) | Q(needle):
        pass
    case (1 as needle):
        pass
    case mod.needle:
        pass
    case _:
        pass
print(f"{items:>{needle}} {items:needle}")
'''

EXPECTED = {
    ("a.py", 2, 18): "docstring_match",
    ("a.py", 3, 15): "callsite",
    ("a.py", 3, 30): "string_match",
    ("a.py", 4, 13): "string_match",
    ("b.py", 2, 12): "docstring_match",
    ("b.py", 3, 10): "callsite",
    ("b.py", 3, 46): "callsite",
    ("b.py", 7, 6): "string_match",  # an f-string first statement is no docstring
    ("b.py", 11, 15): "assignment",
    ("b.py", 13, 14): "assignment",
    ("b.py", 15, 11): "reference",  # keyword of a class pattern: an attribute name
    ("b.py", 15, 25): "assignment",
    ("b.py", 17, 15): "assignment",
    ("b.py", 19, 13): "reference",  # a dotted value pattern compares, it does not bind
    ("b.py", 23, 17): "reference",  # a nested field in a format spec is code
    ("b.py", 23, 33): "string_match",  # the format spec itself is text
}


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int, int], str]:
    root = write_tree(tmp_path_factory.mktemp("acc"), {"a.py": LINE_LEXED, "b.py": PARSED})
    cache = tmp_path_factory.mktemp("acc-cache")  # module scope: set before the autouse one
    run = run_cq(
        "search",
        "needle",
        "--root",
        str(root),
        "--format",
        "json",
        "--limit",
        "0",
        "-w",
        env={"CQ_CACHE_DIR": str(cache)},
    )
    assert run.returncode == 0, run.stderr
    return {(f["file"], f["line"], f["col"]): f["category"] for f in run.json()["findings"]}


@pytest.mark.parametrize("where", sorted(EXPECTED))
def test_category(findings: dict[tuple[str, int, int], str], where: tuple[str, int, int]):
    assert findings.get(where) == EXPECTED[where]


def test_every_occurrence_found(findings: dict[tuple[str, int, int], str]) -> None:
    assert set(findings) == set(EXPECTED)


def test_line_heuristic_defers_to_the_parse_for_fstrings_and_leading_strings() -> None:
    from cq.classify.heuristic import guess
    from cq.model.tuning import ClassifyTuning

    t = ClassifyTuning()
    assert guess("python", "x = 'needle'", 5, 6, True, t).certain
    assert not guess("python", "x = f'{needle}'", 7, 6, True, t).certain
    assert not guess("python", "    'needle'", 5, 6, True, t).certain
    assert not guess("python", "    rb'needle'", 7, 6, True, t).certain


def test_fixture_positions_are_the_word() -> None:
    """Guard the table above: every expected position really holds ``needle``."""
    for (name, line, col), _ in EXPECTED.items():
        text = (LINE_LEXED if name == "a.py" else PARSED).splitlines()[line - 1]
        assert text[col : col + 6] == "needle", (name, line, col)
