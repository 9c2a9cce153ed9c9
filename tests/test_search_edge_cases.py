"""Awkward files and the caps: what rg streams must come out right and bounded."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)


def _search(root: Path, query: str, *extra: str):
    run = run_cq("search", query, "--root", str(root), "--format", "json", "--limit", "0", *extra)
    assert run.returncode in (0, 1), run.stderr
    return run


def test_non_ascii_prefix_gives_character_columns(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "naïve_ñame = '日本語'; target = 1\n"})
    (finding,) = _search(tmp_path, "target").json()["findings"]
    line = "naïve_ñame = '日本語'; target = 1"
    assert finding["col"] == line.index("target")
    assert finding["line_text"][finding["col"] : finding["end_col"]] == "target"


def test_non_utf8_file_is_searched_without_crashing(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {"latin.py": b"# caf\xe9 \xff\n" + b"value = target_name\n", "ok.py": "target_name = 2\n"},
    )
    findings = _search(tmp_path, "target_name").json()["findings"]
    assert {(f["file"], f["line"]) for f in findings} == {("latin.py", 2), ("ok.py", 1)}
    both = _search(tmp_path, "caf").json()["findings"]
    (hit,) = both
    assert hit["file"] == "latin.py" and hit["col"] == 2
    assert "\ufffd" in hit["line_text"]  # undecodable bytes shown, never mistaken for text


def test_a_file_name_that_is_not_utf8_is_one_file_and_enriched(tmp_path: Path) -> None:
    write_tree(tmp_path, {"ok.py": "x = 1\n"})
    (tmp_path / "bad_\udcff.py").write_bytes(b"def weird_handler():\n    return weird_handler\n")
    findings = _search(tmp_path, "weird_handler").json()["findings"]
    assert {f["file"] for f in findings} == {"bad_\udcff.py"}  # reads back as the same name
    use = next(f for f in findings if f["line"] == 2)
    assert use["containing_scope"] == "weird_handler"  # the file was opened and parsed
    asked = _search(tmp_path, "how is the weird handler defined?").json()["findings"]
    assert {f["file"] for f in asked} <= {"bad_\udcff.py", "ok.py"}  # rg's and the index's
    typed = run_cq("search", "weird_handler", "--root", str(tmp_path), env={"CQ_SEMANTIC": "1"})
    assert typed.returncode == 0, typed.stderr  # the Pyrefly stage's keys take the name too
    assert "bad_\\udcff.py:2:11" in typed.stdout  # markdown escapes the undecodable byte


def test_a_rust_file_name_that_is_not_utf8_is_ranked_and_shown(tmp_path: Path) -> None:
    write_tree(tmp_path, {"src/lib.rs": "mod m;\npub fn top() { weird_rust_fn(); }\n"})
    (tmp_path / "src/m\udcfe.rs").write_bytes(b"pub fn weird_rust_fn() -> u32 {\n    42\n}\n")
    findings = _search(tmp_path, "weird_rust_fn").json()["findings"]
    assert {(f["file"], f["category"], f["role"]) for f in findings} == {
        ("src/m\udcfe.rs", "definition", "src"),  # its role asked of its parent module
        ("src/lib.rs", "callsite", "src"),
    }


def test_a_call_in_a_file_that_is_not_utf8_is_degraded_in_words(tmp_path: Path) -> None:
    write_tree(tmp_path, {"latin.py": b"# caf\xe9\ndef helper(x):\n    return helper(x)\n"})
    findings = _search(tmp_path, "helper").json()["findings"]
    call = next(f for f in findings if f["category"] == "callsite")
    reasons = call["enrichment"]["degrade_reasons"]
    assert "libcst: file is not UTF-8" in reasons, reasons  # not an internal IndexError


def test_binary_file_is_skipped(tmp_path: Path) -> None:
    write_tree(
        tmp_path, {"blob.py": b"target_name\x00\x01\x02 binary\n", "src.py": "target_name\n"}
    )
    files = {f["file"] for f in _search(tmp_path, "target_name").json()["findings"]}
    assert files == {"src.py"}


def test_crlf_lines_have_no_carriage_return(tmp_path: Path) -> None:
    write_tree(tmp_path, {"win.py": b"def target_name():\r\n    return 1\r\n"})
    (finding,) = _search(tmp_path, "target_name").json()["findings"]
    assert finding["line_text"] == "def target_name():"
    assert finding["line"] == 1


def test_huge_single_line_file_is_clipped_not_dumped(tmp_path: Path) -> None:
    payload = "x = [" + "1, " * 1_750_000 + "target_name]\n"  # ~5 MB on one line
    write_tree(tmp_path, {"big.py": payload})
    run = _search(tmp_path, "target_name", "--max-filesize", str(10 * 1024 * 1024))
    (finding,) = run.json()["findings"]
    assert finding["col"] == payload.index("target_name")
    assert len(finding["line_text"]) < 1000
    assert "target_name" in finding["line_text"]
    assert len(run.stdout_bytes) < 50_000
    skipped = _search(tmp_path, "target_name")  # default max file size (2 MiB) skips it
    assert skipped.returncode == 1


@pytest.fixture
def many(tmp_path: Path) -> Path:
    files = {f"m{i:02d}.py": "hit = 1\nhit = 2\nhit = 3\n" for i in range(12)}
    return write_tree(tmp_path, files)


def test_total_matches_cap(many: Path) -> None:
    data = _search(many, "hit", "--max-total-matches", "7").json()
    stats = data["summary"]["stats"]
    assert len(data["findings"]) == 7
    assert stats["caps_hit"] == "total_matches" and stats["truncated"] is True
    again = _search(many, "hit", "--max-total-matches", "7").json()
    assert [(f["file"], f["line"]) for f in again["findings"]] == [
        (f["file"], f["line"]) for f in data["findings"]
    ]


def test_files_cap(many: Path) -> None:
    data = _search(many, "hit", "--max-files", "4").json()
    assert len({f["file"] for f in data["findings"]}) == 4
    assert data["summary"]["stats"]["caps_hit"] == "files"
    # the cap is deterministic: the first files in path order are kept
    assert sorted({f["file"] for f in data["findings"]}) == ["m00.py", "m01.py", "m02.py", "m03.py"]


def test_a_rewritten_search_is_not_cut_to_the_first_files_in_path_order(many: Path) -> None:
    """A question's patterns are guesses; the profile's file cap kept the first files in path
    order and dropped the rest of the tree. Its ``question_max_files`` applies instead; a
    cap given on the command line binds the question too."""
    profile = many / "small.toml"
    profile.write_text("max_files = 4\nquestion_max_files = 50\n")
    typed = _search(many, "hit", "--profile", str(profile)).json()
    assert typed["summary"]["stats"]["caps_hit"] == "files"
    asked = _search(many, "hit", "--rewrite", "--profile", str(profile)).json()
    assert asked["summary"]["stats"]["caps_hit"] == "none"
    assert {f["file"] for f in asked["findings"]} >= {f"m{i:02d}.py" for i in range(12)}
    capped = _search(many, "hit", "--rewrite", "--profile", str(profile), "--max-files", "4")
    assert capped.json()["summary"]["stats"]["caps_hit"] == "files"


def test_matches_per_file_cap(many: Path) -> None:
    data = _search(many, "hit", "--max-matches-per-file", "2").json()
    assert len(data["findings"]) == 24
    assert all(f["line"] in (1, 2) for f in data["findings"])
    stats = data["summary"]["stats"]
    assert stats["caps_hit"] == "matches_per_file" and stats["truncated"] is True


def test_no_cap_reports_none(many: Path) -> None:
    stats = _search(many, "hit").json()["summary"]["stats"]
    assert stats == {
        **stats,
        "caps_hit": "none",
        "truncated": False,
        "timed_out": False,
        "matched_files": 12,
        "total_matches": 36,
        "scanned_files": 12,
    }


def test_timeout_stops_rg_and_says_so(tmp_path: Path) -> None:
    write_tree(tmp_path, {f"d{i}/f{j}.py": "hit = 1\n" * 50 for i in range(20) for j in range(20)})
    run = run_cq(
        "search", "hit", "--root", str(tmp_path), "--format", "json", "--timeout", "0.0001"
    )
    assert run.returncode in (0, 1)
    stats = run.json()["summary"]["stats"]
    assert stats["timed_out"] is True and stats["truncated"] is True


def test_profiles_by_name_and_by_path(many: Path, tmp_path: Path) -> None:
    audit = _search(many, "hit", "--profile", "audit").json()
    assert audit["summary"]["profile"] == "audit"
    custom = tmp_path / "mine.toml"
    custom.write_text("max_total_matches = 5\n")
    data = _search(many, "hit", "--profile", str(custom)).json()
    assert len(data["findings"]) == 5
    assert data["summary"]["stats"]["caps_hit"] == "total_matches"
    custom.write_text("max_totl_matches = 5\n")
    bad = run_cq("search", "hit", "--root", str(many), "--profile", str(custom))
    assert bad.returncode == 2 and "max_totl_matches: unknown key" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_flag_overrides_profile(many: Path) -> None:
    data = _search(many, "hit", "--profile", "audit", "--max-total-matches", "3").json()
    assert len(data["findings"]) == 3
