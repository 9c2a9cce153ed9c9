"""A quiet, scannable markdown report: no LLM line unless the user named a model server, the
``run:`` line and telemetry only with ``--explain``/``-v``, no empty headings, one fence per
place, a long signature not repeated on every use. JSON keeps everything."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

FILES = {
    "pkg/store.py": (
        "def save_record(item: int, *, retries: int = 3, timeout: float = 10.0, "
        'reason: str = "nightly") -> int:\n    return item\n'
    ),
    "pkg/jobs.py": (
        "from pkg.store import save_record\n\n\n"
        "def nightly(x: int) -> None:\n    save_record(x)\n    save_record(x, retries=1)\n\n\n"
        "def hourly(x: int) -> None:\n    save_record(x, timeout=1.0)\n"
    ),
    "pkg/api.py": "from pkg.store import save_record\nfrom pkg.jobs import nightly\n",
    "tests/test_store.py": "from pkg.store import save_record\n\n\ndef test_it():\n"
    "    save_record(1)\n",
}
QUESTION = "how are records saved with retries in the nightly job?"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "repo", FILES)


def search(repo: Path, *args: str, env: dict[str, str] | None = None):
    run = run_cq("search", *args, "--root", str(repo), env=env)
    assert run.returncode == 0, run.stderr
    return run


def test_no_llm_line_unless_the_user_named_a_model_server(repo):
    """cq tries a local Ollama by default; its absence is not worth a line. A server the user
    named (here ``CQ_LLM_URL``, pointing nowhere) that fails gets one."""
    default = {"CQ_LLM_URL": ""}  # unset: the default server, which does not answer here
    md = search(repo, QUESTION, env=default).stdout
    assert "read as a question and rewritten offline into names" in md
    # its hits are those names', not its words as text
    assert " · searched as the names below · " in md, md
    assert not re.search(r"^your model was not used|11434|refused", md, re.M | re.I), md
    rewrite = search(repo, QUESTION, "--format", "json", env=default).json()["summary"]["rewrite"]
    assert rewrite["llm_configured"] is False and "fallback_reason" in rewrite  # JSON keeps it

    named = search(repo, QUESTION).stdout  # conftest names http://127.0.0.1:9/
    fallback = [line for line in named.splitlines() if "127.0.0.1:9" in line]
    said = "your model was not used, so the rewrite was made offline: llm ollama at"
    assert len(fallback) == 1 and fallback[0].startswith(said)


def test_run_line_and_telemetry_only_with_explain(repo):
    quiet = search(repo, "save_record").stdout
    assert not re.search(r"^(run|telemetry): ", quiet, re.M), quiet
    for flag in ("-v", "--explain"):
        loud = search(repo, "save_record", flag).stdout
        assert loud.splitlines()[-1].startswith("run: ")
        assert re.search(r"^telemetry: ", loud, re.M)
    data = search(repo, "save_record", "--format", "json").json()
    assert data["run"]["elapsed_ms"] >= 0 and data["summary"]["telemetry"]


def test_no_heading_without_lines_under_it(repo):
    md = search(repo, "save_record", "--limit", "1").stdout
    lines = md.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("## "):  # a ### under it is its body
            body = next((x for x in lines[i + 1 :] if x.strip()), "")
            assert body and not body.startswith("## "), f"empty heading {line!r}"
    assert "## Imports" not in md  # none shown: its count is in Uses by Kind
    kinds = md.split("## Uses by Kind", 1)[1]
    assert re.search(r"from_import 3\b", kinds)


def test_top_contexts_fence_each_place_apart(repo):
    md = search(repo, "save_record").stdout
    top = md.split("## Top Contexts", 1)[1].split("\n## ", 1)[0].splitlines()
    bullets = [i for i, line in enumerate(top) if line.startswith("- `")]
    fences = [line for line in top if line.startswith("```") and line != "```"]
    assert len(bullets) >= 4 and len(fences) == len(bullets)
    for i in bullets:  # each place: its bullet, then a fence holding that one line
        assert top[i + 1] == "```python" and top[i + 3] == "```", top[i : i + 4]
        line_number = int(re.match(r"- `[^`]+:(\d+):\d+`", top[i]).group(1))
        path = re.match(r"- `([^`:]+):", top[i]).group(1)
        source = (repo / path).read_text().splitlines()
        assert top[i + 2] == source[line_number - 1]


def test_a_long_signature_is_not_repeated_on_every_use(repo):
    """With Pyrefly, every call resolved to ``save_record`` used to carry its whole type."""
    env = {"CQ_SEMANTIC": "1", "CQ_SEMANTIC_WAIT_MS": "60000"}  # a one-shot search waits
    md = search(repo, "save_record", env=env).stdout
    # every finding is shown in Top Contexts: the calls are grouped under where they
    # resolve, the imports say it on their bullets, and only the Answer's line gives the type
    assert "### calls resolved to `pkg/store.py:1` (Pyrefly)" in md, md
    calls = md.split("### calls resolved to", 1)[1].split("\n### ", 1)[0]
    assert calls.count(" callsite") == 4 and "retries" not in calls.split("```")[0], md
    assert md.count("from_import → `pkg/store.py:1`") == 3, md
    # two calls on line 5 of two files: each bullet over its own line
    assert "- `tests/test_store.py:5:4` callsite (test)\n```python\n    save_record(1)\n" in md
    told = [x for x in md.splitlines() if "retries: int" in x and not x.startswith("def ")]
    assert len(told) == 1 and told[0].startswith("**Answer:**"), told
