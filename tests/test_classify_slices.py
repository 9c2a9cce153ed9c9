"""A cold search parses a Python file as slices around its hits when they sit in a small part
of it. The verdicts must be the ones a whole-file parse gives, on the traps a line-based cut
could fall into, and a repeat search must find the sliced records in the cache (a search with
the same tuning finds its finished verdicts first; one with other confidences, a profile,
reuses the slices)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from conftest import run_cq, write_tree

from cq.cache.store import FILE_NAME

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

FILLER = "".join(f"def filler_{i}(a, b):\n    return a + b * {i}\n\n\n" for i in range(60))

SLICED = (
    '"""Module docstring: target."""\n'  # 1
    "import os\n"  # 2
    "\n"  # 3
    'TEMPLATE = """\n'  # 4
    "def target():\n"  # 5: code inside a string, at column 0
    '    return 1\n"""\n'  # 6-7
    "SETTING = 1\n"  # 8
    'r"An attribute docstring is a plain string: target."\n'  # 9
    "\n\n"  # 10-11
    "class Holder(Base,\n"  # 12
    "             Mixin):\n"  # 13
    '    """Holder docstring: target."""\n'  # 14
    "\n"  # 15
    "    limit = target\n"  # 16
    "\n"  # 17
    "    @register(target)\n"  # 18
    "    @other\n"  # 19
    "    def first(self):\n"  # 20
    "        return target(self)\n"  # 21
    "# a comment at column 0 inside the class: target\n"  # 22
    "    def second(self):\n"  # 23
    "        value = 2\n"  # 24
    "        return value\n"  # 25
    "\n\n"  # 26-27
    "try:\n"  # 28
    "    import fast\n"  # 29
    "except ImportError:\n"  # 30
    "    target = None\n"  # 31
    "\n\n" + FILLER
)

EXPECTED = [
    (1, "docstring_match", None),
    (5, "string_match", None),
    (9, "string_match", None),
    (14, "docstring_match", "Holder"),
    (16, "reference", "Holder"),
    (18, "reference", "Holder"),
    (21, "callsite", "Holder.first"),
    (22, "comment_match", "Holder"),
    (31, "assignment", None),
]

# ``@`` at column 0 continuing an expression: the scan takes it for a decorator, the slice
# does not parse, and the file is parsed whole.
MISCUT = "product = (left\n@ target)\n\n\n" + FILLER


# Other classification confidences: the cached verdicts do not apply, the parsed slices do.
RETUNED = "[classify]\nrecords_token = 0.9\n"


def _search(root: Path, *extra: str):
    argv = ("search", "target", "--root", str(root), "--format", "json", "--limit", "0", *extra)
    run = run_cq(*argv)
    assert run.returncode == 0, run.stderr
    return run


def _verdicts(run) -> dict[int, tuple[str, str | None]]:
    return {f["line"]: (f["category"], f["containing_scope"]) for f in run.json()["findings"]}


@pytest.fixture(scope="module")
def sliced_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(
        tmp_path_factory.mktemp("sliced"), {"mod.py": SLICED, "retuned.toml": RETUNED}
    )


def _retuned(root: Path):
    return _search(root, "--profile", str(root / "retuned.toml"))


def test_sliced_verdicts_match_the_whole_file(sliced_repo: Path) -> None:
    run = _search(sliced_repo)
    counters = run.json()["run"]["counters"]
    assert counters["files_sliced"] == 1 and counters["slices_parsed"] >= 3
    assert counters.get("files_parsed", 0) == 0
    found = _verdicts(run)
    assert found == {line: (category, scope) for line, category, scope in EXPECTED}


def test_a_repeat_search_reads_the_slices_from_the_cache(sliced_repo: Path) -> None:
    first = _search(sliced_repo)
    again = _search(sliced_repo)
    counters = again.json()["run"]["counters"]
    assert counters["verdict_cache_hits"] == 1
    assert counters.get("slices_parsed", 0) == 0 and counters.get("files_parsed", 0) == 0
    assert _verdicts(again) == _verdicts(first)
    retuned = _retuned(sliced_repo)
    counters = retuned.json()["run"]["counters"]
    assert counters["slice_cache_hits"] == 1 and "verdict_cache_hits" not in counters
    assert counters.get("slices_parsed", 0) == 0 and counters.get("files_parsed", 0) == 0
    assert _verdicts(retuned) == _verdicts(first)  # categories and scopes, not confidences


def test_a_corrupt_sliced_entry_is_rebuilt(sliced_repo: Path, _isolated_cache: Path) -> None:
    good = _search(sliced_repo)
    db = sqlite3.connect(_isolated_cache / FILE_NAME)
    db.execute(
        "UPDATE entries SET value = x'c1ff00'"
        " WHERE namespace LIKE 'records-%' OR namespace LIKE 'verdicts-%'"
    )
    db.commit()
    db.close()
    again = _search(sliced_repo)
    counters = again.json()["run"]["counters"]
    assert counters["cache_corrupt"] == 2 and counters["slices_parsed"] >= 3  # verdicts, slices
    assert _verdicts(again) == _verdicts(good)
    assert _search(sliced_repo).json()["run"]["counters"]["verdict_cache_hits"] == 1
    assert _retuned(sliced_repo).json()["run"]["counters"]["slice_cache_hits"] == 1


def test_other_hits_in_the_same_file_get_their_own_slices(sliced_repo: Path) -> None:
    _search(sliced_repo)
    run = run_cq("search", "second", "--root", str(sliced_repo), "--format", "json")
    counters = run.json()["run"]["counters"]
    assert counters.get("slice_cache_hits", 0) == 0 and counters["slices_parsed"] == 1
    (hit,) = run.json()["findings"]
    assert (hit["line"], hit["category"], hit["containing_scope"]) == (
        23,
        "definition",
        "Holder.second",
    )


def test_a_slice_that_does_not_parse_falls_back_to_the_whole_file(tmp_path: Path) -> None:
    write_tree(tmp_path, {"mod.py": MISCUT})
    run = _search(tmp_path)
    counters = run.json()["run"]["counters"]
    assert counters["slices_failed"] == 1 and counters["files_parsed"] == 1
    assert _verdicts(run) == {2: ("reference", None)}


def test_crlf_line_endings_slice_the_same(tmp_path: Path) -> None:
    write_tree(tmp_path, {"mod.py": SLICED.replace("\n", "\r\n").encode()})
    run = _search(tmp_path)
    assert run.json()["run"]["counters"]["files_sliced"] == 1
    assert _verdicts(run) == {line: (category, scope) for line, category, scope in EXPECTED}


def test_a_hit_in_a_file_too_large_to_parse_whole_is_classified_from_its_slice(
    tmp_path: Path,
) -> None:
    table = "".join(f"ENTRY_{i} = {i}\n" for i in range(300_000))  # ~5 MB of assignments
    write_tree(tmp_path, {"big.py": table + "\n\ndef lookup():\n    return target(1)\n"})
    run = run_cq(
        "search", "target", "--root", str(tmp_path), "--format", "json",
        "--max-filesize", str(16 * 1024 * 1024),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    (hit,) = run.json()["findings"]
    assert (hit["category"], hit["containing_scope"], hit["tier"]) == (
        "callsite",
        "lookup",
        "records",
    )
    # Whole-file work is bounded too: no whole parse for enrichment, no symtable compile.
    assert "tree_sitter: file over 4 MiB" in hit["enrichment"]["degrade_reasons"]
    assert hit.get("symtable") is None


# One slice holding many hits of different kinds (its records cover only what touches them).
CROWDED = (
    FILLER
    + (
        "class Box:\n"
        "    def method(self, target=None):\n"
        '        """Uses target."""\n'
        "        value = self.target.inner(target)  # target in a comment\n"
        "        label = f\"{target!r} and {self.target} are {'target'}\"\n"
        "        target, other = other(target), target\n"
        "        return [target for target in value if target.ok]\n"
    )
    + FILLER
)

UNSLICED = "[parse]\nmax_sliced_fraction = 0.0\n"


@pytest.mark.parametrize("query", ["target", "self.target", "target} are"])
def test_many_hits_in_one_slice_get_the_whole_file_verdicts(tmp_path: Path, query: str) -> None:
    write_tree(tmp_path, {"mod.py": CROWDED, "unsliced.toml": UNSLICED})

    def verdicts(*extra: str) -> tuple[dict, list]:
        run = run_cq("search", query, "--root", str(tmp_path), "--format", "json", *extra)
        assert run.returncode == 0, run.stderr
        found = [
            (f["line"], f["col"], f["category"], f["containing_scope"], f["node_kind"])
            for f in run.json()["findings"]
        ]
        return run.json()["run"]["counters"], sorted(found)

    sliced_counters, sliced = verdicts("--limit", "0")
    whole_counters, whole = verdicts("--limit", "0", "--profile", str(tmp_path / "unsliced.toml"))
    assert sliced_counters["files_sliced"] == 1 and whole_counters["files_parsed"] == 1
    assert sliced and sliced == whole


# Hits in a few statements of long functions: each is parsed as that statement under a
# stand-in ``def`` line, not as its whole function (or method), with the same verdicts.
BODY = "".join(f"        step_{i} = compute(step_{i - 1}, {i})\n" for i in range(1, 80))
STATEMENTS = (
    FILLER
    + "class Runner(Base):\n"
    + "    def run(self, task=None):\n"
    + '        """Runs the task."""\n'
    + "        step_0 = self.target\n"
    + BODY
    + "        # the next statement follows a comment: target\n"
    + "        for item in target.items():\n"
    + "            if item:\n"
    + "                target(item)\n"
    + "            # a comment closing the loop's body: target\n"
    + BODY
    + "        @decorate(target)\n"
    + "        def inner(value=target):\n"
    + "            first = value\n"
    + BODY.replace("        ", "            ")
    + "            return target.get(first)  # target\n"
    + BODY
    + "        try:\n"
    + "            result = target()\n"
    + "        except (ValueError, target.Error):\n"
    + "            result = None\n"
    + BODY
    + "        return target  # the body's last statement\n"
    + "\n\n"
    + "def helper(\n"
    + "    target,\n"
    + "):\n"
    + BODY.replace("        ", "    ")
    + "    values = [\n"
    + "        target,\n"
    + "    ]\n"
    + BODY.replace("        ", "    ")
    + "    # trailing comment of the body: target\n"
    + "\n\n"
    + FILLER
)


def _sliced_and_whole(root: Path) -> tuple[dict, list, dict, list]:
    """Counters and every hit's verdict (line, column, category, scope, node kind) of a
    search for ``target`` in ``root``, sliced and then parsed whole (``unsliced.toml``).
    Classification's verdicts are under test, not enrichment's: LibCST's reading of 15 hits
    in an 18 KB function (a skeleton parsed per hit) was ~1.8 of each search's ~2.3 CPU-s,
    and the compared fields are the same without it."""

    def verdicts(*extra: str) -> tuple[dict, list]:
        argv = ("search", "target", "--root", str(root), "--format", "json", "--limit", "0")
        run = run_cq(*argv, *extra, env={"CQ_ENRICH_LIBCST_HITS": "0"})
        assert run.returncode == 0, run.stderr
        found = [
            (f["line"], f["col"], f["category"], f["containing_scope"], f["node_kind"])
            for f in run.json()["findings"]
        ]
        return run.json()["run"]["counters"], sorted(found)

    return (*verdicts(), *verdicts("--profile", str(root / "unsliced.toml")))


def test_hits_in_long_functions_parse_only_their_statements(tmp_path: Path) -> None:
    write_tree(tmp_path, {"mod.py": STATEMENTS, "unsliced.toml": UNSLICED})
    sliced_counters, sliced, whole_counters, whole = _sliced_and_whole(tmp_path)
    assert whole_counters["files_parsed"] == 1 and "slices_failed" not in sliced_counters
    assert len(sliced) == 15 and sliced == whole
    assert {scope for *_, scope, _ in sliced} == {"Runner.run", "Runner.run.inner", "helper"}
    # ``run`` holds 18 KB, its statements with hits a few hundred bytes each; ``inner`` and
    # ``helper`` (5 KB each) have hits in their signatures and decorators: their heads are
    # parsed with a stand-in body.
    assert sliced_counters["bytes_parsed"] < 1_500


# Slices of one file are parsed joined in one text, in the order they start: ``last``'s whole
# slice (a hit in its signature) ends the file without a newline, and the slice of its body's
# statement (the other hit) follows it in the text, on a line of its own.
UNTERMINATED = FILLER + (
    "def last(value=target):\n"  # 241
    "    step = 1\n"
    "    return target  # the end, no newline"  # 243
)


def test_slices_joined_after_a_last_line_without_a_newline(tmp_path: Path) -> None:
    write_tree(tmp_path, {"mod.py": UNTERMINATED, "unsliced.toml": UNSLICED})
    sliced = _search(tmp_path)
    whole = _search(tmp_path, "--profile", str(tmp_path / "unsliced.toml"))
    counters = sliced.json()["run"]["counters"]
    assert counters["files_sliced"] == 1 and "slices_failed" not in counters
    assert counters["slices_parsed"] == 2
    expected = {241: ("reference", "last"), 243: ("reference", "last")}
    assert _verdicts(sliced) == _verdicts(whole) == expected


# Classes nested in a function and in a class, their first statements, docstrings and heads:
# each hit is parsed as its member's statement or as a head with a stand-in body, never as
# the whole class around it, with the verdicts (and scopes) of the whole file.
NESTED = (
    FILLER
    + "def factory(base):\n"
    + "    class Local(base):\n"
    + '        """Local docstring: target."""\n'
    + "        kind = target  # the class's first statement\n"
    + "        # a comment after it: target\n"
    + "        limit = 2\n"
    + "\n"
    + "        def __init__(self, target=None):\n"
    + "            self.value = target\n"
    + BODY.replace("        ", "            ")
    + "\n"
    + "        class Inner:\n"
    + "            def method(self):\n"
    + BODY.replace("        ", "                ")
    + "                return target(self)\n"
    + "    return Local\n"
    + "\n\n"
    + "class Outer:\n"
    + "    class Nested(Base):\n"
    + "        @property\n"
    + "        def target(self):\n"
    + BODY.replace("        ", "            ")
    + "            return 1\n"
    + "\n\n"
    + FILLER
)


def test_nested_classes_parse_their_members_and_heads_only(tmp_path: Path) -> None:
    write_tree(tmp_path, {"mod.py": NESTED, "unsliced.toml": UNSLICED})
    sliced_counters, sliced, whole_counters, whole = _sliced_and_whole(tmp_path)
    assert whole_counters["files_parsed"] == 1 and "slices_failed" not in sliced_counters
    assert len(sliced) == 7 and sliced == whole
    scopes = {scope for *_, scope, _ in sliced}
    assert {"factory.Local", "factory.Local.__init__", "factory.Local.Inner.method"} <= scopes
    assert "Outer.Nested.target" in scopes
    # The classes hold 17 KB; what holds the hits is a few hundred bytes with stand-ins.
    assert sliced_counters["bytes_parsed"] < 1_500
