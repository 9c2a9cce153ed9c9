"""What README.md and GUIDE.md promise a user, checked on the real CLI where a walk of the docs
found the program saying otherwise."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from conftest import run_cq, word_tree, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

TREE = {
    "pkg/store.py": ("class Store:\n    def get_bucket(self, name):\n        return name\n"),
    "pkg/cli.py": "from pkg.store import Store\n\nStore().get_bucket('x')\n",
}


def refused(run, *words: str) -> str:
    """Exit 2 and one ``cq: ...`` line naming the reason, never an internal error."""
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.startswith("cq: ") and run.stderr.count("\n") == 1, run.stderr
    assert "internal error" not in run.stderr and "Traceback" not in run.stderr
    for word in words:
        assert word in run.stderr, run.stderr
    return run.stderr


def test_a_directory_in_the_profiles_dir_is_refused_as_not_a_regular_file(
    tmp_path: Path,
) -> None:
    """GUIDE.md: your own profiles are "checked like any profile file (a regular file of at
    most 1 MiB)"; a directory named ``NAME.toml`` there is no profile."""
    root = write_tree(tmp_path / "repo", TREE)
    own = Path(os.environ["XDG_CONFIG_HOME"]) / "cq" / "profiles"
    (own / "wide.toml").mkdir(parents=True)
    run = run_cq("search", "get_bucket", "--root", str(root), "--profile", "wide")
    refused(run, "wide.toml", "not a regular file")
    (root / "dir.toml").mkdir()  # the same for a profile named by path inside the root
    run = run_cq("search", "get_bucket", "--root", str(root), "--profile", str(root / "dir.toml"))
    refused(run, "not a regular file")


def test_cq_schema_describes_what_the_json_report_holds(tmp_path: Path) -> None:
    """GUIDE.md: ``cq schema`` prints the JSON Schema of the ``--format json`` report. Every
    property it gives the report is one the report writes (none it never carries), and every
    type it defines is one the report uses."""
    root = write_tree(tmp_path / "repo", TREE)
    doc = run_cq("schema").json()
    report = run_cq("search", "get_bucket", "--root", str(root), "--format", "json").json()
    assert set(doc["$defs"]["SearchResult"]["properties"]) == set(report)
    text = json.dumps(doc)
    unused = [name for name in doc["$defs"] if f'"#/$defs/{name}"' not in text]
    assert unused == []


def test_cache_prune_never_reports_the_database_grown(tmp_path: Path) -> None:
    """GUIDE.md: ``cq cache prune`` brings the database under its bound now. Its line compares
    the database before and after, the write-ahead log included on both sides: prune folds
    the log into the file, which alone would seem to grow."""
    root = word_tree(tmp_path, 1)
    assert run_cq("search", "record", "--root", str(root), "--limit", "0").returncode == 0
    info = run_cq("cache", "info").stdout
    # a search that closes its store cleanly leaves no log (sqlite folds it at the last close);
    # the line still counts one, whatever a still-open process left
    assert re.search(r"WAL ([\d.]+) MB", info) is not None, info
    pruned = run_cq("cache", "prune")
    sizes = re.search(r": ([\d.]+) MB -> ([\d.]+) MB", pruned.stdout)
    assert pruned.returncode == 0 and sizes is not None, pruned.stdout + pruned.stderr
    assert float(sizes[2]) <= float(sizes[1]), pruned.stdout


def test_an_operator_query_starting_with_a_dash_is_told_to_follow_double_dash(
    tmp_path: Path,
) -> None:
    """GUIDE.md: a query of operators (``->``, ``-=``) is a text search, and "a query starting
    with ``-`` goes after ``--``": the refusal of ``cq search ->`` says so and names the
    query whole, as it does for ``-flag``; rg's own flags are still named as flags."""
    root = write_tree(tmp_path / "repo", {"calc.py": "def f(a) -> int:\n    a -= 1\n"})
    for query in ("->", "-="):
        run = run_cq("search", query, "--root", str(root))
        refused(run, f"does not take {query} ", "a query starting with '-' goes after '--'")
        found = run_cq("search", "--root", str(root), "--", query)
        assert found.returncode == 0 and "calc.py:" in found.stdout, found.stderr
    flag = refused(run_cq("search", "x", "--pcre2", "--root", str(root)), "--pcre2")
    assert "goes after" not in flag


def test_a_question_on_a_tree_too_large_to_index_says_to_run_cq_index(tmp_path: Path) -> None:
    """CONTRIBUTING.md: a root with more new source than ``CQ_INDEX_AUTO_BYTES`` is indexed only by
    ``cq index``. A question there answers without the index and says so, naming the
    command, once on stderr; after ``cq index`` the question uses it and says nothing."""
    root = write_tree(tmp_path / "repo", TREE)
    small = {"CQ_INDEX_AUTO_BYTES": "10"}
    question = ("search", "how is a bucket fetched from the store?", "--root", str(root))
    run = run_cq(*question, env=small)
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("cq: warning: "), run.stderr
    assert "`cq index`" in run.stderr and "CQ_INDEX_AUTO_BYTES" in run.stderr
    assert run_cq("index", "--root", str(root)).returncode == 0
    run = run_cq(*question, env=small)
    assert run.returncode == 0 and run.stderr == ""


def test_raising_cq_index_auto_bytes_lets_the_next_question_build_the_index(
    tmp_path: Path,
) -> None:
    """CONTRIBUTING.md: a search builds the index itself up to ``CQ_INDEX_AUTO_BYTES`` of new
    source. A tree found too large under a lower bound is not too large once the bound allows it:
    the next question builds its index at once (it was refused for ten minutes)."""
    root = write_tree(tmp_path / "repo", TREE)
    question = ("search", "how is a bucket fetched from the store?", "--root", str(root))
    low = run_cq(*question, "--format", "json", env={"CQ_INDEX_AUTO_BYTES": "10"}).json()
    assert low["summary"]["telemetry"]["index"]["skipped_over_bytes"] == 10
    run = run_cq(*question, "--format", "json")  # the default bound, 128 MiB
    index = run.json()["summary"]["telemetry"]["index"]
    assert run.stderr == "" and index.get("skipped_over_bytes") is None, run.stderr
    assert index["files"] == len(TREE)


def test_a_profiles_semantic_table_is_checked_like_its_other_tables(tmp_path: Path) -> None:
    """GUIDE.md: a profile file is checked before anything runs, and anything wrong is refused
    with one line naming the key. ``[semantic]`` too: a wait of ``inf`` was an internal
    error, a negative budget or a ``nan`` wait was taken."""
    root = write_tree(tmp_path / "repo", TREE)
    cases = {
        "wait_ms = inf": "semantic.wait_ms: must be a finite number of 0 or more",
        "wait_ms = nan": "semantic.wait_ms: must be a finite number of 0 or more",
        "budget_ms = -5.0": "semantic.budget_ms: must be a finite number of 0 or more",
        "bogus = 1": "semantic.bogus: unknown key",
    }
    for line, reason in cases.items():
        (root / "p.toml").write_text(f"[semantic]\n{line}\n")
        run = run_cq("search", "get_bucket", "--root", str(root), "--profile", str(root / "p.toml"))
        refused(run, reason)
    (root / "p.toml").write_text("[semantic]\nwait_ms = 100\nenabled = false\n")
    run = run_cq("search", "get_bucket", "--root", str(root), "--profile", str(root / "p.toml"))
    assert run.returncode == 0, run.stderr


def test_a_very_long_semantic_wait_is_a_wait_not_an_internal_error(tmp_path: Path) -> None:
    """GUIDE.md: ``--semantic-wait MS`` (or ``CQ_SEMANTIC_WAIT_MS``) waits up to MS ms for
    Pyrefly's answers. A wait longer than a timer holds (``1e300``) is still a wait: the
    answers come and are shown (it was an internal ``OverflowError``)."""
    root = write_tree(tmp_path / "repo", TREE)
    on = {"CQ_SEMANTIC": "1"}
    for extra, env in (
        (("--semantic-wait", "99999999999999999999"), on),
        ((), {**on, "CQ_SEMANTIC_WAIT_MS": "1e300"}),
    ):
        run = run_cq(
            "search", "get_bucket", "--root", str(root), *extra, "--format", "json", env=env
        )
        assert run.returncode == 0, run.stderr
        definition = run.json()["findings"][0]
        assert definition["enrichment"]["semantic"]["status"] == "applied", definition


def test_mcp_and_schema_refusals_say_what_is_wrong(tmp_path: Path) -> None:
    """GUIDE.md: a bad invocation is one ``cq: ...`` line, exit 2. ``cq mcp --root`` names a
    file or a missing directory as ``cq search --root`` does (it said "root not found" of a
    file that exists), and only ``cq search`` is told to quote a query."""
    root = write_tree(tmp_path / "repo", TREE)
    search = refused(run_cq("search", "x", "--root", str(root / "pkg" / "cli.py")))
    mcp = refused(run_cq("mcp", "--root", str(root / "pkg" / "cli.py"), stdin=""))
    assert mcp == search == f"cq: root is not a directory: {root / 'pkg' / 'cli.py'}\n"
    gone = refused(run_cq("mcp", "--root", str(root / "gone"), stdin=""))
    assert gone == refused(run_cq("search", "x", "--root", str(root / "gone")))
    extra = refused(run_cq("schema", "extra"), "'extra'", "cq schema --help")
    assert "query" not in extra
