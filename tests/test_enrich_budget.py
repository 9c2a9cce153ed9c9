"""Payload byte budget, agreement and crosscheck, on real parses."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_tree
from enrich_hits import enrich, finding_at

from cq.enrich.agreement import adjust_confidence, build_agreement, crosscheck_reason
from cq.enrich.budget import enforce_budget, payload_size
from cq.enrich.nodes import HitSpan, sg_locate, ts_locate
from cq.enrich.py_structure import structural_facts
from cq.enrich.shown import EnrichSettings
from cq.model.tuning import EnrichTuning
from cq.parse import SourceFile, sg_root, ts_tree
from cq.profiles import load_tuning

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


def test_crosscheck_setting_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CQ_PY_ENRICHMENT_CROSSCHECK", "1")
    monkeypatch.setenv("CQ_ENRICH_MAX_BYTES", "2048")
    settings = EnrichSettings.from_env(load_tuning("interactive", "."))
    assert settings.crosscheck is True and settings.tuning.max_payload_bytes == 2048
    monkeypatch.delenv("CQ_PY_ENRICHMENT_CROSSCHECK")
    assert EnrichSettings.from_env().crosscheck is False
