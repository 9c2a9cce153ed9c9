"""What the semantic-stage test modules share: the stage turned on (conftest turns it off
for the rest of the suite), a search that waits for Pyrefly's answers (a one-shot search
shows only cached ones otherwise), and a JSON search by the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cq


@pytest.fixture(autouse=True)
def semantic_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Imported by a test module, turns the stage on for each of its tests. Pyrefly's
    answers, not its speed on a shared machine: the searches wait for them (tests of the
    cache and the background set their own)."""
    monkeypatch.setenv("CQ_SEMANTIC", "1")
    monkeypatch.setenv("CQ_SEMANTIC_WAIT_MS", "600000")


# The wait ends when Pyrefly answers; its bound is only for a test gone wrong. Pyrefly runs
# ten nice steps below the search: beside CPU burners on a loaded machine it gets a few per
# cent of a core, and a search's answers took over 30 s there (answers, not timing, are
# asserted here).
ANSWER_BUDGET = {"CQ_SEMANTIC_WAIT_MS": "600000"}


def search_json(root: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    run = run_cq("search", *args, "--root", str(root), "--format", "json", env=env)
    assert run.returncode == 0, run.stderr
    return run.json()


def semantic_of(finding: dict) -> dict | None:
    return (finding.get("enrichment") or {}).get("semantic")


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.split("\n"), 1) if needle in line)
