"""The Answer's "Why:" is true of the code it shows: the question's words its text matches
by stem ("implemented" and ``RequestImpl`` share "impl") are said to share stems, never said
to be spelled there. Real cq subprocesses on a small tree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import run_cq, write_tree

from cq.index.coverage import unit_words
from cq.rewrite.words import stem

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

FILES = {
    "server.py": (
        "class RequestImpl:\n"
        '    """Holds one request."""\n'
        "\n"
        "    def handle(self, body):\n"
        "        return body.upper()\n"
        "\n"
        "\n"
        "def serve(port):\n"
        "    return RequestImpl().handle(str(port))\n"
    ),
}


def test_why_names_no_word_the_answers_text_does_not_spell(tmp_path: Path) -> None:
    tree = write_tree(tmp_path, FILES)
    run = run_cq("search", "how is the request handling implemented?", "--root", str(tree))
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    why = next(line for line in lines if line.startswith("Why: "))
    where = re.search(r"defined at `server\.py:(\d+):\d+`", run.stdout)
    assert where is not None, run.stdout
    start = int(where[1]) - 1
    body = "\n".join(FILES["server.py"].splitlines()[start : start + 2])
    owner = re.search(r"defined at `[^`]+` in `(\w+)`", run.stdout)  # shown beside it
    body += f"\n{owner[1]}" if owner else ""
    said = re.search(r"its text says ([\w, ]+) \(", why)
    for word in said[1].split(", ") if said else ():
        assert word in body.lower(), f"{word!r} is not in the answer's text: {why}"
    shared = re.search(r"its words share stems with ([\w, ]+) \(", why)
    assert shared is not None, why
    held = unit_words(body)
    assert all(stem(w) in held for w in shared[1].split(", ")), why
