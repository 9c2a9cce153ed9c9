"""Exact phrases: a message searched as text first, its Answer the code that writes it.

A sentence that is no question (an error message, a log line) is looked for as written
before any rewrite; -F never rewrites; a message whose values were filled in finds its format
string; the code raising it answers, not a test asserting it or a help text describing it;
a hit whose file was not parsed says its scope is unknown and does not outrank a parsed one.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

MESSAGE = "The widget store was closed"

STORE = {
    # a help text and a test mention the message; the exception class raises it
    "pkg/cli.py": (
        "import argparse\n\n\ndef parser():\n    p = argparse.ArgumentParser()\n"
        f'    p.add_argument("--strict", help="fail with {MESSAGE} when it is")\n'
        "    return p\n"
    ),
    "pkg/errors.py": (
        '"""Errors."""\n\n\nclass StoreClosed(Exception):\n    def __init__(self):\n'
        f'        super().__init__("{MESSAGE}")\n'
    ),
    "tests/test_store.py": (
        "from pkg.errors import StoreClosed\n\n\ndef test_closed():\n"
        f'    assert str(StoreClosed()) == "{MESSAGE}"\n'
    ),
    # words of the message name many things: a rewrite guesses among them
    "pkg/store.py": (
        "class WidgetStore:\n    def close_store(self):\n        self.closed = True\n\n"
        "    def was_closed(self):\n        return self.closed\n\n\n"
        "def open_widget_store():\n    return WidgetStore()\n"
    ),
}


def test_a_message_is_answered_by_the_code_raising_it(tmp_path: Path) -> None:
    write_tree(tmp_path, STORE)
    run = run_cq("search", MESSAGE, "--root", str(tmp_path))
    assert run.returncode == 0, run.stderr
    answer = run.stdout.split("\n\n")[1]
    assert answer.startswith("**Answer:** `StoreClosed.__init__` raises it"), run.stdout
    assert "`pkg/errors.py:6:" in answer
    data = run_cq("search", MESSAGE, "--root", str(tmp_path), "--format", "json").json()
    assert data["summary"]["rewrite"] is None  # found as written: nothing guessed
    assert {f["category"] for f in data["findings"]} == {"string_match"}


def test_literal_mode_never_rewrites(tmp_path: Path) -> None:
    """-F is the user saying how to search: a phrase found nowhere is not rewritten."""
    write_tree(tmp_path, STORE)
    absent = "The widget store was reopened twice"
    data = run_cq("search", "-F", absent, "--root", str(tmp_path), "--format", "json").json()
    assert data["summary"]["rewrite"] is None
    assert data["findings"] == []
    found = run_cq("search", "-F", MESSAGE, "--root", str(tmp_path), "--format", "json").json()
    assert found["summary"]["rewrite"] is None and found["findings"]


def test_a_message_with_its_values_filled_in_finds_its_format_string(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pkg/reader.py": (
                "def advance(buf, n):\n    if len(buf) < n:\n"
                '        raise ValueError(f"len is {len(buf)} but advancing by {n}")\n'
            ),
            "pkg/other.py": "def length_of(buf):\n    return len(buf)\n",
        },
    )
    run = run_cq("search", "len is 2 but advancing by 4", "--root", str(tmp_path))
    assert run.returncode == 0, run.stderr
    answer = run.stdout.split("\n\n")[1]
    assert answer.startswith("**Answer:** `advance` raises it, at `pkg/reader.py:3:"), run.stdout


def test_a_hit_the_lexer_alone_decided_is_shown_in_the_scope_its_parse_reads(
    tmp_path: Path,
) -> None:
    """The line lexer decides a hit in a string without parsing its file: its scope is not
    "module level" (which outranked every hit inside a method), and once the hit is shown
    the parse that enriches it reads the method it sits in, which the report and the
    Answer name."""
    write_tree(
        tmp_path,
        {
            "pkg/plain.py": (
                "class Export:\n    def run(self):\n        if True:\n"
                f'            raise ValueError("{MESSAGE}")\n'
            ),
            "pkg/parsed.py": (
                '"""Docs."""\n\n\nclass Loader:\n    def load(self):\n'
                f'        self.failure = "{MESSAGE}"\n'
            ),
        },
    )
    args = ("search", "--no-rewrite", MESSAGE, "--root", str(tmp_path))
    data = run_cq(*args, "--format", "json").json()
    found = {f["file"]: (f["tier"], f["containing_scope"]) for f in data["findings"]}
    assert found == {
        "pkg/plain.py": ("heuristic", "Export.run"),
        "pkg/parsed.py": ("records", "Loader.load"),
    }
    md = run_cq(*args).stdout
    assert md.split("\n\n")[1].startswith("**Answer:** `Export.run` raises it, at `pkg/plain.py:4:")
    assert "### `Export.run` (`pkg/plain.py`)" in md, md
    assert "scope unknown" not in md, md
    assert "module level (`pkg/plain.py`)" not in md
