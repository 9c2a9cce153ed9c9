"""The summary line agrees with the findings it heads: a search whose findings all come from
the repository index (rg matched no line) does not say that nothing matched. Real cq
subprocesses on a small tree."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

FILES = {
    "utils.py": 'def parse_config(path):\n    """Read the config file."""\n    return path\n',
    "app.py": "from utils import parse_config\n\n\ndef start():\n    return parse_config('x')\n",
    "pkg/utils.py": "def helper():\n    return 1\n",
}


def test_findings_the_index_alone_found_are_not_summed_up_as_no_match(tmp_path: Path) -> None:
    tree = write_tree(tmp_path, FILES)
    query = "what does pkg/utils.py do?"
    data = run_cq("search", query, "--root", str(tree), "--format", "json").json()
    assert data["findings"], "the index finds the files of the question"
    assert all(f["tier"] == "index" for f in data["findings"])
    assert not any(ls["stats"]["total_matches"] for ls in data["summary"]["languages"])
    md = run_cq("search", query, "--root", str(tree))
    summary = next(line for line in md.stdout.splitlines() if " shown · " in line)
    assert summary.startswith(f"{data['summary']['total_findings']} finding")
    assert "no files matched" not in summary and "the index found these" in summary


def test_one_finding_in_one_file_is_said_in_the_singular(tmp_path: Path) -> None:
    tree = write_tree(tmp_path, {"utils.py": "def helper():\n    return 1\n"})
    md = run_cq("search", "helper", "--root", str(tree))
    summary = next(line for line in md.stdout.splitlines() if " shown · " in line)
    assert summary.startswith("1 finding, 1 shown · ") and " 1 in 1 file · " in summary
