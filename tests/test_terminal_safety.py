"""Markdown never prints a control character from the searched tree; JSON stays valid.

The tree holds what an attacker would plant: an OSC title sequence (``ESC ] 0 ; ... BEL``)
in a line, a CR that would overwrite the line, C1 and bidi controls, an ESC and a newline in
file names, and a file name that is not UTF-8. Searched with the real CLI.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

# What must never reach a terminal raw: C0 controls but tab and the newlines the report
# itself writes, DEL, C1 controls, bidi overrides and isolates, line/paragraph separators.
_RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_TITLE = "\x1b]0;pwned\x07"


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    write_tree(
        tmp_path,
        {
            "title.py": f"def register():\n    return '{_TITLE}'  # register\n",
            "overwrite.py": "register = 1 \x08\x08\x0c\x0b\x7f  # register\n",
            "c1.py": "register = '\u009b31m'  # \u202eregister\u202c\n",
            "esc\x1b[31mname.py": "x = register\n",
            "new\nline.py": "x = register\n",
            "bell\x07.rs": "fn register() {}\n",
            "cr\rname.py": "register = 2\n",
        },
    )
    folder = os.path.join(os.fsencode(tmp_path), b"caf\xe9")
    os.mkdir(folder)
    with open(os.path.join(folder, b"\xff.py"), "wb") as fh:
        fh.write(b"x = register\n")
    return tmp_path


def _markdown(root: Path, *args: str) -> str:
    run = run_cq("search", "register", "--root", str(root), "--limit", "0", *args)
    assert run.returncode == 0, run.stderr
    return run.stdout_bytes.decode("utf-8")  # strict: the report is valid UTF-8


def test_markdown_has_no_raw_control_characters(hostile: Path) -> None:
    for args in ((), ("--explain",)):
        text = _markdown(hostile, *args)
        assert _RAW_CONTROL.search(text) is None, _RAW_CONTROL.search(text)
        assert "\\x1b]0;pwned\\x07" in text  # escaped, visibly
        assert "register = 1 \\x08\\x08\\x0c\\x0b\\x7f  # register" in text
        assert "\\x9b31m" in text and "\\u202eregister" in text


def test_file_names_with_controls_stay_on_their_line(hostile: Path) -> None:
    text = _markdown(hostile)
    assert "`esc\\x1b[31mname.py:1:4`" in text
    assert "`new\\nline.py:1:4`" in text
    assert "`bell\\x07.rs:1:3`" in text
    assert "`cr\\rname.py:1:0`" in text
    # the tail of the name never starts a line of its own
    assert not any(line.startswith("line.py") for line in text.splitlines())


def test_json_stays_valid_and_exact(hostile: Path) -> None:
    run = run_cq("search", "register", "--root", str(hostile), "--format", "json", "--limit", "0")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout_bytes.decode("utf-8"))
    files = {f["file"] for f in data["findings"]}
    assert {"esc\x1b[31mname.py", "new\nline.py", "bell\x07.rs", "cr\rname.py"} <= files
    # undecodable name bytes as JSON's \udcXX escapes: the name read back opens the file
    assert "caf\udce9/\udcff.py" in files and (hostile / "caf\udce9/\udcff.py").is_file()
    title = next(f for f in data["findings"] if f["file"] == "title.py" and f["line"] == 2)
    assert _TITLE in title["line_text"]
    for f in data["findings"]:
        assert f["line_text"][f["col"] : f["end_col"]] == f["text"]


def test_json_output_is_plain_ascii_safe_bytes(hostile: Path) -> None:
    """JSON escapes C0 control characters itself: none on the wire raw, not even a newline."""
    run = run_cq("search", "register", "--root", str(hostile), "--format", "json", "--limit", "0")
    assert re.search(rb"[\x00-\x1f]", run.stdout_bytes.rstrip(b"\n")) is None
