"""``-g``/``--glob`` as rg has them: the same option as ``--include``, repeatable, ``!`` to
leave paths out, a later glob winning over an earlier one. The files cq searches are the
files rg itself lists for the same globs, for a name (rg's candidates) and for a question
(the repository index's files and functions, filtered in Python)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import run_cq, write_tree

from cq.tools import find_rg

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

DEF = "def get_bucket(name):\n    return name.lower()\n"
USE = "from pkg.store import get_bucket\n\n\ndef test_get_bucket():\n    assert get_bucket('A')\n"
TREE = {
    "pkg/store.py": DEF,
    "pkg/tests/test_store.py": USE,
    "tests/test_app.py": USE,
    "app.py": "from pkg.store import get_bucket\n\n\ndef handler():\n    return get_bucket('b')\n",
    "vendor/old.py": DEF,
    "src/lib.rs": "pub fn get_bucket() -> u32 {\n    7\n}\n",
}
GLOBS = [
    ["*.py"],
    ["!tests/**"],
    ["*.py", "!test_*.py"],
    ["!*.rs", "src/**"],
    ["*.py", "!pkg/**", "pkg/store.py"],
    ["test_*.py", "!tests/*"],
]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("globs") / "repo", TREE)


def rg_files(repo: Path, globs: list[str]) -> set[str]:
    argv = [find_rg(), "--files", *(a for g in globs for a in ("-g", g))]
    listed = subprocess.run(argv, cwd=repo, capture_output=True, text=True, check=True).stdout
    return set(listed.split())


def flags(globs: list[str]) -> list[str]:
    """Every spelling of the option at once: -g, --glob, --include."""
    spelt = ("-g", "--glob", "--include")
    return [a for i, g in enumerate(globs) for a in (spelt[i % 3], g)]


@pytest.mark.parametrize("globs", GLOBS, ids=" ".join)
def test_a_name_is_searched_in_the_files_rg_lists_for_the_same_globs(repo, globs) -> None:
    run = run_cq("search", "get_bucket", *flags(globs), "--root", str(repo), "--format", "json")
    assert run.returncode in (0, 1), run.stderr
    found = {f["file"] for f in run.json()["findings"]} if run.returncode == 0 else set()
    assert found == rg_files(repo, globs)


@pytest.mark.parametrize("globs", GLOBS, ids=" ".join)
def test_a_questions_functions_and_files_come_from_the_files_rg_lists(repo, globs) -> None:
    assert run_cq("index", "--root", str(repo)).returncode == 0
    question = "how are the bucket names lowered and tested?"
    argv = ["search", question, *flags(globs), "--root", str(repo), "--format", "json"]
    run = run_cq(*argv)
    assert run.returncode in (0, 1), run.stderr
    result = run.json()
    files = {f["file"] for f in result["findings"]}
    for section in result["sections"]:
        files |= {f["file"] for f in section.get("functions", [])}
        files |= {f["file"] for f in section.get("files", [])}
    assert files <= rg_files(repo, globs), files - rg_files(repo, globs)


def test_glob_is_in_the_mcp_tools_include_argument_and_help() -> None:
    from cq.model.options import SEARCH_OPTIONS

    include = next(o for o in SEARCH_OPTIONS if o.name == "include")
    assert {"-g", "--glob", "--include"} <= set(include.flags) and include.mcp
    assert "rg's -g" in (include.mcp_help or "")
    assert "--glob GLOB" in run_cq("search", "--help").stdout


@pytest.mark.parametrize(
    ("argv", "fault"),
    [
        (["get_bucket", "-g", "[abc"], "'[abc': unclosed character class"),
        (["how are buckets got?", "--exclude", "{a,b"], "unclosed alternate group"),
    ],
)
def test_a_malformed_glob_is_named_as_the_users_not_as_rg_failing(
    repo: Path, argv: list[str], fault: str
) -> None:
    """rg refuses the glob before it searches: cq says which glob and why, in one line with
    exit 2, as for any bad flag value; not "rg failed", as if the tool had broken."""
    run = run_cq("search", *argv, "--root", str(repo))
    assert run.returncode == 2
    assert run.stderr.startswith("cq: invalid glob "), run.stderr
    assert fault in run.stderr and "rg failed" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr


@pytest.mark.parametrize("listing", [[], ["-l"]])
def test_a_malformed_exclude_glob_is_shown_as_written(repo: Path, listing: list[str]) -> None:
    """An ``--exclude`` glob is passed to rg as ``!GLOB``: its fault names the glob the user
    wrote, not the ``!`` they did not; a ``-g '!GLOB'`` they wrote keeps its ``!``."""
    run = run_cq("search", *listing, "x", "--exclude", "{a,b", "--root", str(repo))
    assert run.returncode == 2
    assert run.stderr.startswith("cq: invalid glob '{a,b': unclosed alternate group"), run.stderr
    assert run.stderr.rstrip().endswith("(an --exclude glob)"), run.stderr
    negated = run_cq("search", *listing, "x", "-g", "!{a,b", "--root", str(repo))
    assert negated.stderr.startswith("cq: invalid glob '!{a,b'"), negated.stderr
