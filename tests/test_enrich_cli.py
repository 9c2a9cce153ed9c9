"""Enrichment as a user of ``cq search --format json`` sees it: real cq, real rg."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

SRC = """\
import os.path as osp


class Registry:
    def register(self, name):
        return osp.join(name)


def setup(registry):
    registry.register("a")
    registry.register("b")
"""


def _search(root: Path, *extra: str, env: dict[str, str] | None = None):
    return run_cq("search", "register", "--root", str(root), "--format", "json", *extra, env=env)


def test_shown_findings_carry_enrichment_and_telemetry(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"pkg/reg.py": SRC, "src/lib.rs": "fn register() {}\n"})
    cold = _search(root, "--limit", "3")
    assert cold.returncode == 0, cold.stderr
    data = cold.json()
    assert data["summary"]["total_findings"] == 4 and len(data["findings"]) == 3
    for finding in data["findings"]:
        enrichment = finding["enrichment"]
        assert enrichment["status"] == "applied"
        assert enrichment["construct"] in {"function_def", "call"}
    by_line = {(f["file"], f["line"]): f["enrichment"] for f in data["findings"]}
    calls = [e for e in by_line.values() if e["construct"] == "call"]
    assert all(e["call"]["receiver"] == "registry" for e in calls)
    telemetry = data["summary"]["telemetry"]
    counts = {k: v for k, v in telemetry.items() if k.startswith("enrichment.")}
    shown_languages = {f["language"] for f in data["findings"]}
    assert sum(c["applied"] for c in counts.values()) == 3
    assert {k.removeprefix("enrichment.") for k in counts} == shown_languages
    assert any(k.startswith("enrich.") for k in data["run"]["timings_ms"])

    (rust,) = _search(root, "--lang", "rust").json()["findings"]
    assert rust["enrichment"]["construct"] == "function_def"
    assert rust["enrichment"]["rust"]["item_kind"] == "function_item"

    warm = _search(root, "--limit", "3")  # served from the enrichment store
    assert warm.json()["run"]["counters"].get("enrich.store_hits") == 3
    assert {k: v for k, v in warm.json().items() if k != "run"} == {
        k: v for k, v in data.items() if k != "run"
    }


def test_time_budget_leaves_hits_unenriched_not_failed(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"pkg/reg.py": SRC})
    run = _search(root, env={"CQ_ENRICH_BUDGET_MS": "0"})
    assert run.returncode == 0, run.stderr
    data = run.json()
    assert all(f["enrichment"]["status"] == "skipped" for f in data["findings"])
    assert all(f["enrichment"]["degrade_reasons"] == ["time budget"] for f in data["findings"])
    assert data["summary"]["telemetry"]["enrichment.python"]["skipped.time_budget"] == 3


def test_hits_past_the_libcst_quota_are_stored_too(tmp_path: Path) -> None:
    """A wide --limit: LibCST runs for the first N hits only, and a repeat search serves every
    hit from the store (the quota, unlike the clock, decides the same way every time)."""
    calls = "".join(f"\n\ndef f{i}():\n    return osp.join({i})\n" for i in range(3))
    root = write_tree(tmp_path / "repo", {"pkg/j.py": "import os.path as osp\n" + calls})

    def libcst_stages(run) -> list[str]:  # type: ignore[no-untyped-def]
        return [f["enrichment"]["stages"]["libcst"] for f in run.json()["findings"]]

    def search(env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
        return run_cq("search", "join", "--root", str(root), "--format", "json", env=env)

    quota = {"CQ_ENRICH_LIBCST_HITS": "1"}
    cold = search(quota)
    assert libcst_stages(cold) == ["applied", "skipped", "skipped"]
    warm = search(quota)
    assert warm.json()["run"]["counters"].get("enrich.store_hits") == 3
    assert "enrich.computed" not in warm.json()["run"]["counters"]
    assert warm.json()["findings"] == cold.json()["findings"]
    assert libcst_stages(search()) == ["applied"] * 3  # no quota: full payloads, not the stored
