"""An issue text's environment and checklist sections are not read: their words are the same
in every issue and name the code that prints versions. Pure function, then real ``cq search -``
subprocesses over a small tree."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cq.rewrite.template import without_environment
from tests.conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

BUG = """Batches are dropped when the loader shuffles

### Describe the bug

The `BatchLoader` drops the last partial batch when `shuffle=True`.

### Environment

- PyTorch Version (e.g., 1.0): 1.3
- OS (e.g., Linux): Ubuntu 18.04
- Python version: 3.7
- CUDA/cuDNN version: 10.1
- GPU models and configuration: 2x V100

### Additional context

It only happens with an uneven dataset.
"""


def test_environment_and_checklist_sections_leave_the_rest_as_written() -> None:
    text = without_environment(BUG)
    assert "CUDA" not in text and "PyTorch Version" not in text and "### Environment" not in text
    assert text.startswith("Batches are dropped") and "drops the last partial batch" in text
    assert text.endswith("### Additional context\n\nIt only happens with an uneven dataset.\n")
    checklist = "Title\n\n### Please complete the following tasks\n\n- [x] I searched\n"
    assert without_environment(checklist) == "Title\n\n"
    one_line = "environment variables are not read"  # a question, not a template
    assert without_environment(one_line) == one_line


def test_a_finding_written_after_the_version_table_is_kept() -> None:
    """pydicom's form: a version table, a blank line, then the reporter's own finding."""
    text = (
        "from_json loses BulkDataURI\n**Your environment**\nmodule | version\n------ | -------\n"
        "pydicom | 2.1.0\n\nThe problem is in `jsonrep.py` at line 227, where the URI is read.\n"
    )
    kept = without_environment(text)
    assert "pydicom | 2.1.0" not in kept and "The problem is in `jsonrep.py` at line 227" in kept


def test_a_configuration_section_is_dropped_only_when_it_is_a_version_table() -> None:
    table = (
        "Bug\n\n### Configuration\n\n| key | value |\n| --- | --- |\n| version | 0.87.1 |\n"
        "| build_os | macos |\n"
    )
    assert "build_os" not in without_environment(table)
    config_file = "Bug\n\n### Configuration\n\n```ini\n[tool]\ndialect = ansi\nmax_line = 80\n```\n"
    assert without_environment(config_file) == config_file  # the user's settings are the bug


def test_an_environment_section_does_not_pull_the_version_printer_to_the_top(
    tmp_path: Path,
) -> None:
    root = write_tree(
        tmp_path / "repo",
        {
            "pkg/collect_env.py": (
                '"""Print the environment: PyTorch version, OS, CUDA, GPU."""\n\n'
                "def pytorch_version():\n    return 'PyTorch version 1.3'\n\n"
                "def cuda_version():\n    return 'CUDA/cuDNN version 10.1'\n\n"
                "def gpu_models_and_configuration():\n    return 'GPU models and configuration'\n\n"
                "def os_version():\n    return 'OS version Linux Ubuntu'\n\n"
                "def python_version():\n    return 'Python version 3.7'\n"
            ),
            "pkg/loader.py": (
                '"""Batches of a dataset."""\n\n'
                "class BatchLoader:\n    def __init__(self, data, size, shuffle=False):\n"
                "        self.data, self.size, self.shuffle = data, size, shuffle\n\n"
                "    def batches(self):\n        n = len(self.data) // self.size\n"
                "        return [self.data[i * self.size:(i + 1) * self.size] for i in range(n)]\n"
            ),
        },
    )
    run = run_cq("search", "-", "--root", str(root), "--format", "json", stdin=BUG)
    assert run.returncode == 0, run.stderr
    files = list(dict.fromkeys(f["file"] for f in run.json()["findings"]))
    assert files[0] == "pkg/loader.py", files
    assert "pkg/collect_env.py" not in files, files


_PIECES = st.sampled_from(
    [
        "### Environment",
        "**Versions:**",
        "## Describe the bug",
        "### Configuration",
        "| version | 1.0 |",
        "- OS: Linux",
        "",
        "   ",
        "The parser drops the last token when the input ends without a newline.",
        "```",
        "#" * 7 + " Environment",
        "**",
        "# " + " " * 200 + "x",
    ]
)


@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(lines=st.lists(st.one_of(_PIECES, st.text(max_size=40)), max_size=30))
def test_the_cut_only_drops_whole_lines_and_a_second_cut_changes_nothing(
    lines: list[str],
) -> None:
    text = "\n".join(lines)
    cut = without_environment(text)
    kept = iter(text.splitlines(keepends=True))
    assert all(line in kept for line in cut.splitlines(keepends=True))  # an ordered subset
    assert without_environment(cut) == cut
