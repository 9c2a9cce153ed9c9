"""A question waits for its index: a first build slower than ``--timeout`` (rg's watchdog)
but within ``[index] question_wait_s`` is waited for, so the first answer is the one every
later question gets (issue 42: the first answer is the best answer). Real ``cq``
subprocesses, real rg and tantivy; the build is slowed by ``tests/hooked_cq.py``'s
``slow-index`` hook, never by the machine's load."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cq, run_hooked, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

QUESTION = "where are the upload chunks handled?"
MODULE = '''def handler_{i}(request):
    """Handle upload number {i} of the chunks."""
    return request.chunk_{i}


class Store{i}:
    def save(self, name):
        return name
'''


def _relevant(data: dict) -> list[str]:  # type: ignore[type-arg]
    sections = data["sections"]
    return next((s["functions"] for s in sections if s["type"] == "functions"), [])


def test_a_first_build_slower_than_timeout_is_waited_for(tmp_path: Path) -> None:
    """20 files at 0.15 s each: a build of ~3 s against a --timeout of 1 s. The first
    question's report is the one a question gets once the index is built: the index fused,
    its Relevant Functions listed, no warning that it answered without it."""
    root = write_tree(tmp_path / "root", {f"app/m{i}.py": MODULE.format(i=i) for i in range(20)})
    cache = tmp_path / "cache"
    env = {"CQ_CACHE_DIR": str(cache)}
    args = ("search", "--root", str(root), "--format", "json", "--timeout", "1", "--", QUESTION)
    first = run_hooked("slow-index=0.15", *args, env=env)
    assert first.returncode in (0, 1), first.stderr
    assert "repository index" not in first.stderr, first.stderr
    data = first.json()
    assert data["summary"]["telemetry"]["index"].get("files") == 20, data["summary"]
    later = run_cq(*args, env=env).json()
    assert later["run"]["counters"].get("index.files_updated", 0) == 0  # nothing left to build
    assert _relevant(data) and _relevant(data) == _relevant(later)
    assert data["answer"] == later["answer"]
    assert data["findings"] == later["findings"]
