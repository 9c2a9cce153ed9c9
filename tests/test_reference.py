"""docs/reference.md is generated from the program (``python -m tools.gen_reference``): these
tests fail when a flag, an environment variable or a JSON field changes without it, and when
a variable cq reads is missing from the table the reference is made from."""

from __future__ import annotations

import re
from pathlib import Path

from cq.env import ENVIRONMENT, SETTINGS, SWITCHES, TEXTS
from cq.model.options import LIMIT_FLAGS, SEARCH_OPTIONS
from tools import gen_reference

REPO = Path(__file__).resolve().parent.parent


def test_the_reference_is_what_the_program_generates() -> None:
    assert gen_reference.REFERENCE.read_text() == gen_reference.render(), (
        "docs/reference.md is out of date: run python -m tools.gen_reference"
    )


def test_every_cq_variable_read_in_cq_is_described() -> None:
    read = set()
    for path in (REPO / "cq").rglob("*.py"):
        read |= set(re.findall(r"[\"'](CQ_[A-Z0-9_]+)[\"']", path.read_text()))
    documented = {name for name in ENVIRONMENT if name.startswith("CQ_")}
    assert read - documented == set(), "read by cq but not in cq.env.ENVIRONMENT"
    assert documented - read == set(), "in cq.env.ENVIRONMENT but read nowhere in cq/"
    assert set(SETTINGS) | set(SWITCHES) | set(TEXTS) <= set(ENVIRONMENT)


def test_the_reference_names_every_flag_and_variable() -> None:
    text = gen_reference.render()
    for option in SEARCH_OPTIONS:
        for flag in (*option.flags, *(f for s in option.spellings for f in s.flags)):
            assert f"`{flag}`" in text, flag
    for limit in LIMIT_FLAGS:
        assert f"`{limit.flag}`" in text
    for name in ENVIRONMENT:
        assert f"| `{name}` |" in text
    for sub in ("cq agent install", "cq cache", "cq server", "cq embed fetch", "cq index"):
        assert f"`{sub}" in text, sub
    assert "### `Finding`" in text and "| `summary` |" in text


def test_ci_runs_the_readmes_quick_start_commands() -> None:
    """CI is what a newcomer does: each command of the README's Quick start is a line of
    ``.ci/run``, word for word."""
    readme = (REPO / "README.md").read_text()
    start = readme[readme.index("## Quick start") :]
    start = start[: start.index("\n## ", 1)]
    commands = re.findall(r"```bash\n(.+?)\n```", start, re.S)
    assert len(commands) == 2, commands
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    for command in commands:
        assert command in ci, command
