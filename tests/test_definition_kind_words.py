"""A definition question naming the kind of the name ("where's the LabelSampler class") is
about that name: answered by its definition, not by a method whose words the question shares
(before, "class" and "where's" made it prose, and a method of the class answered)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

TREE = {
    "pkg/sampler/label.py": (
        "class LabelSampler:\n    def get_label_probability_map(self, label):\n"
        "        return label\n\n    def get_probabilities_from_label_map(self, label):\n"
        "        return label\n"
    ),
    "pkg/sampler/uses.py": (
        "from pkg.sampler.label import LabelSampler\n\n\ndef make_sampler():\n"
        "    return LabelSampler()\n"
    ),
}


def test_where_is_the_x_class(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    for question in ("where's the LabelSampler class", "where is the LabelSampler class"):
        run = run_cq("search", question, "--root", str(tmp_path), "--no-semantic")
        assert run.returncode == 0, run.stderr
        answer = run.stdout.split("\n\n")[1]
        assert answer.startswith("**Answer:** `LabelSampler`"), (question, answer)
        assert "`pkg/sampler/label.py:1:" in answer, answer
