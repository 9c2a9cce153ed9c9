"""One read per file per search: every stage sees the bytes the corpus hashed, so a file that
changes during a search never gets results of one version cached under the other's hash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cq, run_hooked, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

# ``target`` sits at the same bytes in both versions: a definition in the first, a call in
# the second. Records of one applied to a hit of the other give the wrong category.
FIRST = "def target():\n    return 1\n"
SECOND = "x = target()\nprint(x)    \n"
FILLER = "".join(f"def other_{i}(value):\n    return value + {i}\n\n" for i in range(60))


def _findings(run) -> list[tuple[str, int, int, str, str | None]]:
    assert run.returncode == 0, run.stderr
    return [
        (f["file"], f["line"], f["col"], f["category"], f["containing_scope"])
        for f in run.json()["findings"]
    ]


def _search(root: Path, *extra: str, env: dict[str, str] | None = None):
    return run_cq("search", "target", "--root", str(root), "--format", "json", *extra, env=env)


@pytest.mark.parametrize("pool_bytes", ["1000", "1000000000"], ids=["pool", "in-process"])
def test_a_file_changed_during_a_search_never_poisons_the_cache(
    tmp_path: Path, pool_bytes: str
) -> None:
    env = {"CQ_POOL_MIN_BYTES": pool_bytes}
    repo = write_tree(tmp_path / "repo", {"mod.py": FIRST + FILLER, "use.py": "target()\n"})
    first_only = _search(
        write_tree(tmp_path / "v1", {"mod.py": FIRST + FILLER, "use.py": "target()\n"}),
        "--no-cache",
    )
    second_only = _search(
        write_tree(tmp_path / "v2", {"mod.py": SECOND + FILLER, "use.py": "target()\n"}),
        "--no-cache",
    )
    assert ("mod.py", 1, 4, "definition", "target") in _findings(first_only)
    assert ("mod.py", 1, 4, "callsite", None) in _findings(second_only)

    replacement = tmp_path / "second.py"
    replacement.write_text(SECOND + FILLER)
    changed = run_hooked(
        "change-after-read=mod.py",
        "search",
        "target",
        "--root",
        str(repo),
        "--format",
        "json",
        env={**env, "CQ_TEST_NEW_CONTENT": str(replacement)},
    )
    assert (repo / "mod.py").read_text() == SECOND + FILLER  # the writer did change it
    # The search saw one version throughout: the one it read (and hashed) first.
    assert _findings(changed) == _findings(first_only)
    counters = changed.json()["run"]["counters"]
    assert counters["files_read"] == 2 and counters.get("files_reread", 0) == 0

    # Each version served warm from the cache classifies as that version does uncached.
    (repo / "mod.py").write_text(FIRST + FILLER)
    warm_first = _search(repo, env=env)
    assert warm_first.json()["run"]["counters"].get("files_parsed", 0) == 0
    assert _findings(warm_first) == _findings(first_only)
    (repo / "mod.py").write_text(SECOND + FILLER)
    assert _findings(_search(repo, env=env)) == _findings(second_only)


def test_a_search_reads_each_file_once(tmp_path: Path) -> None:
    files = {f"pkg/m{i}.py": f"def target_{i}():\n    return target({i})\n" for i in range(5)}
    repo = write_tree(tmp_path, {**files, "pkg/core.py": "def target():\n    pass\n"})
    run = _search(repo, "--explain")
    counters = run.json()["run"]["counters"]
    assert counters["files_read"] == 6 and counters.get("files_reread", 0) == 0
    markdown = _search(repo, "--explain", "--format", "md").stdout
    assert "files_read 6" in markdown.splitlines()[-1]


def test_a_file_with_lone_crs_is_read_once_by_the_corpus(tmp_path: Path) -> None:
    """rg does not count lone CRs as line ends, so cq reads such a file to number its lines:
    through the search's corpus, whose read every later stage shares and the counter shows.
    Every open of a file under the root is counted in the process (an audit hook)."""
    repo = write_tree(
        (tmp_path / "repo").resolve(),
        {"mixed.py": b"x = 1\rdef target():\r    pass\n", "use.py": "y = target()\n"},
    )
    opens = tmp_path / "opens.json"
    run = run_hooked(
        f"count-opens={repo}",
        "search",
        "target",
        "--root",
        str(repo),
        "--format",
        "json",
        env={"CQ_TEST_OPENS": str(opens), "CQ_SEMANTIC": "0"},
    )
    assert run.returncode == 0, run.stderr
    assert {(f["file"], f["line"]) for f in run.json()["findings"]} == {
        ("mixed.py", 2),  # after a lone CR: line 2, as Python numbers it
        ("use.py", 1),
    }
    opened = json.loads(opens.read_text())
    assert opened == {str(repo / "mixed.py"): 1, str(repo / "use.py"): 1}
    assert run.json()["run"]["counters"]["files_read"] == 2
