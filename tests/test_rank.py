"""Ranking as a pure function: order by category, role, focus, query signals; ties stable."""

from __future__ import annotations

import random
from pathlib import Path

import msgspec
from conftest import write_tree

from cq.model import Finding, Pattern, RankWeights
from cq.parse import Corpus
from cq.profiles import load_rank_weights
from cq.rank import RankContext, rank_findings
from cq.rank.roles import path_role
from cq.rank.rust_tests import cfg_test_ranges

QUERY = (Pattern(text="register", kind="identifier"),)


def hit(
    file: str,
    line: int,
    category: str,
    *,
    text: str = "register",
    col: int = 4,
    scope: str | None = None,
    confidence: float = 0.95,
    patterns: tuple[int, ...] = (0,),
    language: str = "python",
) -> Finding:
    return Finding(
        file=file,
        line=line,
        col=col,
        end_col=col + len(text),
        text=text,
        line_text=f"    {text}",
        language=language,  # type: ignore[arg-type]
        category=category,  # type: ignore[arg-type]
        confidence=confidence,
        containing_scope=scope,
        patterns=patterns,
    )


def ranked(findings: list[Finding], root: Path, **ctx) -> list[tuple[str, int]]:
    context = RankContext(patterns=ctx.pop("patterns", QUERY), **ctx)
    return [(f.file, f.line) for f in rank_findings(findings, context, Corpus(root))]


def test_definition_before_callsite_before_import_before_comment(tmp_path: Path) -> None:
    findings = [
        hit("pkg/a.py", 1, "comment_match"),
        hit("pkg/a.py", 2, "import"),
        hit("pkg/a.py", 3, "callsite", scope="main"),
        hit("pkg/b.py", 9, "definition", scope="Registry"),
        hit("pkg/a.py", 4, "docstring_match"),
    ]
    assert ranked(findings, tmp_path) == [
        ("pkg/b.py", 9),
        ("pkg/a.py", 3),
        ("pkg/a.py", 2),
        ("pkg/a.py", 4),
        ("pkg/a.py", 1),
    ]


def test_source_before_tests_and_focus_flips_it_without_hiding(tmp_path: Path) -> None:
    findings = [hit("tests/test_a.py", 5, "callsite"), hit("pkg/a.py", 7, "callsite")]
    assert ranked(findings, tmp_path) == [("pkg/a.py", 7), ("tests/test_a.py", 5)]
    assert ranked(findings, tmp_path, focus="tests") == [("tests/test_a.py", 5), ("pkg/a.py", 7)]
    implementation = ranked(findings, tmp_path, focus="implementation")
    assert implementation == [("pkg/a.py", 7), ("tests/test_a.py", 5)]


def test_out_of_focus_factor_is_configurable(tmp_path: Path) -> None:
    findings = [hit("tests/test_a.py", 5, "definition"), hit("pkg/a.py", 7, "callsite")]
    weights = RankWeights(out_of_focus=0.1)
    context = RankContext(patterns=QUERY, focus="implementation", weights=weights)
    scores = {f.file: f.score for f in rank_findings(findings, context, Corpus(tmp_path))}
    default = RankContext(patterns=QUERY, focus="implementation")
    default_scores = {f.file: f.score for f in rank_findings(findings, default, Corpus(tmp_path))}
    assert scores["tests/test_a.py"] < default_scores["tests/test_a.py"]
    assert scores["pkg/a.py"] == default_scores["pkg/a.py"]


def test_exact_definition_of_the_queried_name_ranks_first_even_in_a_test_file(
    tmp_path: Path,
) -> None:
    findings = [
        hit("pkg/a.py", 3, "callsite"),
        hit("pkg/b.py", 1, "definition", text="registers"),
        hit("tests/test_x.py", 2, "definition", scope="Fake.inner"),
    ]
    assert ranked(findings, tmp_path)[0] == ("tests/test_x.py", 2)


def test_file_named_after_the_query_gets_a_boost(tmp_path: Path) -> None:
    findings = [hit("pkg/other.py", 3, "callsite"), hit("pkg/registry/register.py", 3, "callsite")]
    assert ranked(findings, tmp_path)[0] == ("pkg/registry/register.py", 3)
    camel = [hit("b/other.py", 1, "reference", text="SearchRequest")]
    camel.append(hit("b/search_request.py", 1, "reference", text="SearchRequest"))
    patterns = (Pattern(text="SearchRequest", kind="identifier"),)
    assert ranked(camel, tmp_path, patterns=patterns)[0] == ("b/search_request.py", 1)


def test_multi_term_coverage_and_pattern_weight(tmp_path: Path) -> None:
    patterns = (
        Pattern(text="span", kind="identifier", source="offline", weight=1.0),
        Pattern(text="byte_offset", kind="identifier", source="offline", weight=1.0),
        Pattern(text="convert", kind="identifier", source="offline", weight=0.2),
    )
    findings = [
        hit("a.py", 1, "callsite", text="span", patterns=(0,)),
        hit("b.py", 1, "callsite", text="span", patterns=(0,)),
        hit("b.py", 2, "callsite", text="byte_offset", patterns=(1,)),
        hit("c.py", 1, "callsite", text="convert", patterns=(2,)),
    ]
    order = ranked(findings, tmp_path, patterns=patterns)
    assert order[:2] == [("b.py", 1), ("b.py", 2)]  # the file covering both heavy terms
    assert order[-1] == ("c.py", 1)  # the light pattern


def test_ties_break_by_path_line_col_whatever_the_input_order(tmp_path: Path) -> None:
    findings = [hit(f"m{i % 3}.py", i, "reference") for i in range(1, 30)]
    expected = sorted((f.file, f.line) for f in findings)
    for seed in range(5):
        shuffled = findings[:]
        random.Random(seed).shuffle(shuffled)
        assert ranked(shuffled, tmp_path) == expected


def test_nesting_costs_a_little(tmp_path: Path) -> None:
    findings = [hit("a.py", 1, "callsite", scope="A.B.c"), hit("z.py", 1, "callsite")]
    assert ranked(findings, tmp_path) == [("z.py", 1), ("a.py", 1)]
    deep = [hit("a.py", 1, "callsite", scope="A.B.C.D.E.f"), hit("z.py", 1, "import")]
    assert ranked(deep, tmp_path)[0] == ("a.py", 1)  # a small penalty, never a category flip


def test_item_roles_from_paths() -> None:
    cases = {
        "pkg/core.py": "src",
        "./pkg/../pkg/core.py": "src",
        "tests/test_core.py": "test",
        "pkg/test/support.py": "test",
        "pkg/core_test.py": "test",
        "conftest.py": "test",
        "idlelib/idle_test/htest.py": "test",
        "crate/tests/integration.rs": "test",
        "crate/benches/speed.rs": "test",
        "docs/conf.py": "doc",
        "examples/demo.rs": "doc",
        "README.md": "doc",
        "lib/site-packages/requests/api.py": "lib",
        "third_party/x/tests/test_y.py": "lib",
        "src\\windows\\path.py": "src",
        "contest.py": "src",
        "attestation.py": "src",
    }
    assert {path: path_role(path) for path in cases} == cases


RUST = """\
pub fn register() {}

#[cfg(test)]
// helpers for tests
mod tests {
    use super::*;
    #[test]
    fn calls() { register(); }
}

#[cfg(not(test))]
fn real() { register(); }
"""


def test_rust_cfg_test_items_are_tests(tmp_path: Path) -> None:
    write_tree(tmp_path, {"src/lib.rs": RUST})
    ranges = cfg_test_ranges(Corpus(tmp_path), ["src/lib.rs"], use_cache=False)
    assert ranges == {"src/lib.rs": ((3, 9),)}
    findings = [
        hit("src/lib.rs", 8, "callsite", language="rust", col=17),
        hit("src/lib.rs", 12, "callsite", language="rust", col=12),
    ]
    context = RankContext(patterns=QUERY)
    roles = {f.line: f.role for f in rank_findings(findings, context, Corpus(tmp_path))}
    assert roles == {8: "test", 12: "src"}


def test_profile_rank_table_overrides_some_weights(tmp_path: Path) -> None:
    profile = tmp_path / "p.toml"
    profile.write_text(
        "max_files = 10\n[rank]\nout_of_focus = 0.7\n[rank.category]\nimport = 0.9\n"
    )
    weights = load_rank_weights(str(profile), str(tmp_path))
    assert weights.out_of_focus == 0.7
    assert weights.category["import"] == 0.9
    assert weights.category["definition"] == 1.0  # untouched keys keep their defaults


def test_the_final_order_reorders_only_the_shown_findings(tmp_path: Path) -> None:
    import msgspec

    from cq.rank import final_order, score_findings

    context = RankContext(patterns=QUERY)
    findings = [hit(f"m{i}.py", 1, "callsite") for i in range(5)]
    ranked = score_findings(findings, context, Corpus(tmp_path), limit=3)
    assert [f.file for f in ranked.shown] == ["m0.py", "m1.py", "m2.py"]
    # Enrichment lowered the confidence of the best shown hit (a conflict): only the shown
    # three are re-sorted, their scores follow, and no unshown hit moves into them.
    moved = [msgspec.structs.replace(ranked.shown[0], confidence=0.5), *ranked.shown[1:]]
    final = final_order(ranked, moved, context, 3)
    again, tally = final.findings, final.tally
    assert [f.file for f in again] == ["m1.py", "m2.py", "m0.py"]
    assert tally.files_in_rank_order == ("m1.py", "m2.py", "m0.py", "m3.py", "m4.py")
    assert tally.total == 5 and again[2].score < again[1].score


class _Fused(msgspec.Struct, frozen=True):
    findings: list[Finding]


def test_a_callers_questions_calls_lead_the_final_order_with_the_fusion_or_without(
    tmp_path: Path,
) -> None:
    """One order, two paths: the calls of the function a callers question names lead the
    report whether the index's fusion reorders the findings (by whole files) or not, also
    after enrichment lowered a call's confidence below another name's definition."""
    from cq.rank import final_order, score_findings

    context = RankContext(patterns=QUERY, called=frozenset({"register"}))
    findings = [
        hit("a.py", 1, "definition", text="setup"),
        hit("b.py", 3, "callsite"),
        hit("c.py", 5, "callsite"),
        hit("d.py", 7, "comment", text="register"),
    ]
    ranked = score_findings(findings, context, Corpus(tmp_path), limit=3, keep_rest=True)
    assert [f.file for f in ranked.shown] == ["b.py", "c.py", "a.py"]
    # enrichment found the call in c.py doubtful: its score falls below a.py's definition
    moved = [*ranked.shown[:1], msgspec.structs.replace(ranked.shown[1], confidence=0.05)]
    moved.append(ranked.shown[2])
    plain = final_order(ranked, moved, context, 3)
    assert [f.file for f in plain.findings] == ["b.py", "c.py", "a.py"]
    assert plain.findings[1].score < plain.findings[2].score  # the score said it, not the order
    assert plain.fused is None

    def by_path_reversed(everything: list[Finding]) -> _Fused:
        return _Fused(findings=sorted(everything, key=lambda f: f.file, reverse=True))

    fused = final_order(ranked, moved, context, 3, fuse=by_path_reversed)
    assert [f.file for f in fused.findings] == ["c.py", "b.py", "d.py"]
    assert fused.tally.files_in_rank_order == ("d.py", "c.py", "b.py", "a.py")
    assert fused.fused is not None and len(fused.fused.findings) == 4


def test_rust_module_files_declared_under_cfg_test_are_tests(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "src/fs/mod.rs": "mod real;\n#[cfg(test)]\nmod mocks;\n#[cfg(all(test, unix))]\n"
            "pub(crate) mod helpers;\n#[cfg(not(test))]\nmod prod;\n",
            "src/fs/mocks.rs": "pub fn register() {}\n",
            "src/fs/helpers/mod.rs": "pub fn register() {}\n",
            "src/fs/real.rs": "pub fn register() {}\n",
            "src/fs/prod.rs": "pub fn register() {}\n",
            "src/lib.rs": "#[cfg(test)]\nmod fixtures;\n",
            "src/fixtures.rs": "pub fn register() {}\n",
        },
    )
    files = ["src/fs/mocks.rs", "src/fs/helpers/mod.rs", "src/fs/real.rs", "src/fs/prod.rs"]
    findings = [hit(rel, 1, "definition", language="rust", col=7) for rel in files]
    findings.append(hit("src/fixtures.rs", 1, "definition", language="rust", col=7))
    context = RankContext(patterns=QUERY)
    roles = {f.file: f.role for f in rank_findings(findings, context, Corpus(tmp_path))}
    assert roles == {
        "src/fs/mocks.rs": "test",
        "src/fs/helpers/mod.rs": "test",
        "src/fs/real.rs": "src",
        "src/fs/prod.rs": "src",
        "src/fixtures.rs": "test",
    }
