"""Payload byte budget, agreement and crosscheck, on real parses."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, run_hooked, write_tree
from enrich_hits import enrich, finding_at

from cq.enrich import EnrichSettings
from cq.enrich.agreement import adjust_confidence, build_agreement, crosscheck_reason
from cq.enrich.budget import enforce_budget, payload_size
from cq.enrich.nodes import HitSpan, sg_locate, ts_locate
from cq.enrich.py_structure import structural_facts
from cq.model import SearchRequest
from cq.model.tuning import EnrichTuning
from cq.parse import SourceFile, sg_root, ts_tree
from cq.settings import settle

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

PARAMS = ", ".join(f"parameter_number_{i}: int = {i}" for i in range(60))
DECORATORS = "".join(f"@decorator_with_a_long_name_{i}(option_{i}=True)\n" for i in range(60))
BIG = f"{DECORATORS}def huge({PARAMS}) -> None:\n    return None\n"


def test_oversized_payload_keeps_high_priority_fields(tmp_path: Path) -> None:
    write_tree(tmp_path, {"big.py": BIG})
    hit = finding_at(tmp_path, "big.py", "huge", "def huge")
    (full,) = enrich(tmp_path, hit, max_payload_bytes=1_000_000)
    assert len(full.decorators) == 60 and payload_size(full) > 4096

    (trimmed,) = enrich(tmp_path, hit)  # default budget: 4096 bytes
    assert payload_size(trimmed) <= 4096
    assert trimmed.signature == full.signature  # kept whole, not cut
    assert trimmed.function == full.function and trimmed.construct == "function_def"
    assert trimmed.decorators == () and "decorators" in trimmed.dropped_fields
    assert trimmed.dropped_fields[0] == "structural_context"  # least useful goes first

    tiny = enforce_budget(full, 300)
    assert payload_size(tiny) <= 300
    assert tiny.status == full.status and tiny.construct == "function_def"
    assert "signature" in tiny.dropped_fields and tiny.signature is None


def test_payload_within_budget_is_untouched(tmp_path: Path) -> None:
    write_tree(tmp_path, {"small.py": "def small(a):\n    return a\n"})
    (e,) = enrich(tmp_path, finding_at(tmp_path, "small.py", "small", "def small"))
    assert e.dropped_fields == () and e.signature == "def small(a):"


def _facts(code: str, word: str, use_tree_sitter: bool):
    data = code.encode()
    source = SourceFile("x.py", "python", data, code, f"test-{code}")
    col = code.index(word)
    span = HitSpan(0, col, col + len(word), col, col + len(word))
    if use_tree_sitter:
        return structural_facts(ts_locate(ts_tree(source), span), with_receiver=True)
    return structural_facts(sg_locate(sg_root(source).root(), span), with_receiver=False)


def test_agreement_conflict_and_crosscheck() -> None:
    same = build_agreement(
        {
            "ast_grep": _facts("self.a.register()\n", "register", False),
            "libcst": None,
            "tree_sitter": _facts("self.a.register()\n", "register", True),
        }
    )
    assert same is not None and same.status == "partial"
    assert same.sources == ("ast_grep", "tree_sitter") and crosscheck_reason(same) is None

    differ = build_agreement(
        {
            "ast_grep": _facts("self.a.register()\n", "register", False),
            "tree_sitter": _facts("self.b.register()\n", "register", True),
        }
    )
    assert differ is not None and differ.status == "conflict"
    assert differ.conflicts == ("ast_grep vs tree_sitter: call_target",)
    assert crosscheck_reason(differ) == "crosscheck: ast_grep vs tree_sitter: call_target"
    t = EnrichTuning()
    assert adjust_confidence(0.9, differ, t) < 0.9 < adjust_confidence(0.9, _full(), t)


def _full():
    facts = _facts("register()\n", "register", True)
    agreement = build_agreement({"ast_grep": facts, "libcst": facts, "tree_sitter": facts})
    assert agreement is not None and agreement.status == "full"
    return agreement


def test_crosscheck_setting_from_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CQ_PY_ENRICHMENT_CROSSCHECK", "1")
    monkeypatch.setenv("CQ_ENRICH_MAX_BYTES", "2048")
    request = SearchRequest(query="x", root=str(tmp_path))
    settings = EnrichSettings.of(settle(request)[1])
    assert settings.crosscheck is True and settings.tuning.max_payload_bytes == 2048
    monkeypatch.delenv("CQ_PY_ENRICHMENT_CROSSCHECK")
    assert EnrichSettings.of(settle(request)[1]).crosscheck is False


def _tree_with_calls(root: Path, count: int) -> Path:
    """``count`` modules, each calling ``shared`` through an alias (LibCST resolves it)."""
    files = {"lib.py": "def shared(value):\n    return value\n"}
    for i in range(count):
        files[f"m{i}.py"] = (
            f"from lib import shared as s{i}\n\n\ndef f{i}():\n    return s{i}({i})\n"
        )
    return write_tree(root, files)


def test_a_busy_machine_gets_the_same_enrichment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing of enrichment depends on the clock unless the user sets a deadline: a search
    whose every hit is enriched late (a machine whose cores are busy) is enriched alike."""
    monkeypatch.delenv("CQ_ENRICH_BUDGET_MS", raising=False)  # the default: no deadline
    root = _tree_with_calls(tmp_path / "repo", 12)
    args = ("search", "shared", "--root", str(root), "--format", "json", "--no-cache")
    idle = run_cq(*args)
    busy = run_hooked("slow-enrichment=0.6", *args)  # 12 hits and more: 7 s and more late
    assert idle.returncode == busy.returncode == 0, busy.stderr
    enriched = [f["enrichment"] for f in idle.json()["findings"]]
    assert [f["enrichment"] for f in busy.json()["findings"]] == enriched
    assert all(e["status"] != "skipped" for e in enriched)


def test_hits_past_the_bound_say_so_and_a_deadline_is_the_users(tmp_path: Path) -> None:
    root = _tree_with_calls(tmp_path / "repo", 4)
    (root / "bounded.toml").write_text("[enrich]\nmax_hits = 3\n")
    args = ("search", "shared", "--root", str(root), "--format", "json", "--limit", "0")
    bounded = run_cq(*args, "--profile", str(root / "bounded.toml")).json()
    reasons = [f["enrichment"].get("degrade_reasons", []) for f in bounded["findings"]]
    assert all("hit bound" not in r for r in reasons[:3])
    assert reasons[3:] and all(r == ["hit bound"] for r in reasons[3:])
    counts = bounded["summary"]["telemetry"]["enrichment.python"]
    assert counts["skipped.hit_bound"] == len(reasons) - 3
    cut = run_cq(*args, env={"CQ_ENRICH_BUDGET_MS": "0"}).json()  # the user's deadline: none
    assert {f["enrichment"]["status"] for f in cut["findings"]} == {"skipped"}
