"""Tuning as data: every tuned number lives in one typed table with a note on where it came
from, a profile overrides any of them, and ``--explain`` names the ones behind a score."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from conftest import run_cq, write_tree

from cq.model.tuning import Tuning, provenance
from cq.profiles import load_tuning

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

SOURCE = "def handler(event):\n    return event\n\n\nlog = handler\n"


def _groups(prefix: str, value: msgspec.Struct):  # type: ignore[no-untyped-def]
    """Each table of tuned numbers, nested ones (``index.fusion``) too."""
    yield prefix, value
    for name in value.__struct_fields__:
        inner = getattr(value, name)
        if isinstance(inner, msgspec.Struct):
            yield from _groups(f"{prefix}.{name}", inner)


@pytest.mark.parametrize("group", Tuning.__struct_fields__)
def test_every_tuned_number_says_where_it_came_from(group: str) -> None:
    for name, value in _groups(group, getattr(Tuning(), group)):
        kind = type(value)
        notes = provenance(kind)
        assert notes and set(notes) == set(kind.__struct_fields__)
        for field, note in notes.items():
            assert note.startswith(("hand-set", "measured")), f"{name}.{field}: {note!r}"


def test_a_nested_table_keeps_the_defaults_it_does_not_name(tmp_path: Path) -> None:
    profile = tmp_path / "nested.toml"
    profile.write_text("[index.python]\nw_named = 2.0\n[index.file_boosts]\ndoc = 0.0\n")
    default, tuned = Tuning().index, load_tuning(str(profile), str(tmp_path)).index
    assert tuned.python == msgspec.structs.replace(default.python, w_named=2.0)
    assert tuned.python.w_units == 0.0 != tuned.fusion.w_units  # the Python fusion's own
    assert tuned.fusion == default.fusion
    assert tuned.file_boosts.table() == {"path_words": 2.0, "names": 1.0, "body": 1.0}


def _reference(run) -> dict:
    assert run.returncode in (0, 1), run.stderr
    (found,) = [f for f in run.json()["findings"] if f["line"] == 5 and f["col"] == 6]
    return found


def test_a_profile_overrides_a_classification_confidence(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", {"mod.py": SOURCE})
    profile = repo / "tuned.toml"  # a profile file must lie inside the root (cq.confine)
    profile.write_text("[classify]\nrecords_reference = 0.25\n[rank.category]\nreference = 0.9\n")
    env = {"CQ_ENRICH_BUDGET_MS": "0"}  # no enrichment: agreement leaves confidence alone
    args = ("search", "handler", "--root", str(repo), "--format", "json", "--explain")
    default = _reference(run_cq(*args, env=env))
    tuned = _reference(run_cq(*args, "--profile", str(profile), env=env))
    assert default["category"] == tuned["category"] == "reference"
    assert (default["confidence"], tuned["confidence"]) == (0.85, 0.25)
    assert (default["explain"]["category_weight"], tuned["explain"]["category_weight"]) == (
        0.5,
        0.9,
    )


def test_an_unknown_tuned_number_is_a_one_line_error(tmp_path: Path) -> None:
    profile = tmp_path / "typo.toml"
    profile.write_text("[classify]\nrecords_referense = 0.25\n")
    run = run_cq("search", "handler", "--root", str(tmp_path), "--profile", str(profile))
    assert run.returncode == 2
    assert run.stderr.startswith(f"cq: profile {profile}: classify.records_referense: unknown key")
    assert len(run.stderr.splitlines()) == 1


def test_explain_names_the_tuned_number_behind_each_factor(tmp_path: Path) -> None:
    repo = write_tree(tmp_path, {"mod.py": SOURCE})
    text = run_cq("search", "handler", "--root", str(repo), "--explain").stdout
    definition = next(
        line for line in text.splitlines() if "mod.py:1:4" in line and "score" in line
    )
    for name in ("rank.category.definition", "rank.role.src", "classify.records_*"):
        assert name in definition
    assert "rank.exact_definition 4" in definition
