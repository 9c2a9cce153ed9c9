"""Rust questions and the index: a file the issue names by a panic location leads the file
order; Relevant Functions lists functions, not the types and impl blocks around them. Real
rg, real tantivy, real ``python -m cq`` subprocesses."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

PARSER = """/// Parse the command line into matches.
pub struct Parser {
    pub args: Vec<String>,
}

impl Parser {
    /// The matches of every argument given on the command line.
    pub fn get_matches(&self) -> Vec<String> {
        self.args.iter().map(|arg| arg.trim().to_string()).collect()
    }
}
"""
VALIDATOR = """/// Checks the matches against the argument rules.
pub struct Validator;

impl Validator {
    pub fn check_rules(&self, given: &[String]) -> bool {
        given.iter().all(|g| !g.is_empty())
    }
}
"""
PANIC = """Panic on an empty argument

An empty argument on the command line makes the program panic:

```
thread 'main' panicked at 'index out of bounds',
  /home/me/.cargo/registry/src/x/app-1.0.0/src/validator.rs:5:9
```
"""


@pytest.fixture
def crate(tmp_path: Path) -> Path:
    return write_tree(
        tmp_path / "crate",
        {
            "src/lib.rs": "pub mod parser;\npub mod validator;\n",
            "src/parser.rs": PARSER,
            "src/validator.rs": VALIDATOR,
        },
    )


def search(crate: Path, query: str, *extra: str) -> dict:
    run = run_cq("search", "-", "--root", str(crate), "--format", "json", *extra, stdin=query)
    assert run.returncode in (0, 1), run.stderr
    return run.json()


def file_order(data: dict) -> list[str]:
    return list(dict.fromkeys(f["file"] for f in data["findings"]))


def functions(data: dict) -> list[str]:
    found = next((s for s in data["sections"] if s["type"] == "functions"), None)
    return [f["name"] for f in found["functions"]] if found else []


def test_a_file_a_rust_issue_names_by_its_panic_location_leads(crate: Path) -> None:
    without_location = PANIC.replace("/src/validator.rs:5:9", "")
    assert file_order(search(crate, without_location))[0] == "src/parser.rs"
    data = search(crate, PANIC, "--explain")
    assert file_order(data)[0] == "src/validator.rs"
    first = data["findings"][0]
    assert first["file"] == "src/validator.rs" and first["explain"]["file_rank_named"] == 1


def test_explain_names_the_fusion_a_rust_question_was_ranked_by(crate: Path) -> None:
    """A one-line question has its own weights (``index.one_line``); an issue text Rust's."""
    for text, weights in (
        ("how are the matches validated?", "index.one_line"),
        (PANIC, "index.fusion"),
    ):
        data = search(crate, text, "--explain")
        assert {f["explain"].get("file_fusion") for f in data["findings"]} == {weights}


def test_relevant_functions_of_a_rust_question_are_functions(crate: Path) -> None:
    data = search(crate, "how does the parser get the matches of the command line?")
    names = functions(data)
    assert names and names[0] == "src/parser.rs::Parser::get_matches"
    assert "src/parser.rs::Parser" not in names  # the struct and its impl block are not listed
    first = next(s for s in data["sections"] if s["type"] == "functions")["functions"][0]
    assert first["signature"] == "pub fn get_matches(&self) -> Vec<String>"  # the body cut off


def test_test_files_units_do_not_take_the_unit_ranks_of_source_files() -> None:
    """Ten tests saying the issue's words lead the index's units; the source file whose one
    function says them too still gets the first unit rank among files."""
    from cq.index.fuse import index_file_order
    from cq.index.query import IndexHit, IndexHits
    from cq.model.index_tuning import RUST_FUSION as RUST

    tests = [IndexHit(path=f"tests/t{i}.rs", kind="fn", qualname=f"case_{i}") for i in range(10)]
    source = IndexHit(path="src/parser.rs", kind="fn", qualname="parse_type")
    other = IndexHit(path="src/lexer.rs", kind="file")
    hits = IndexHits(files=(other,), units=(*tests, source))
    order = index_file_order(hits, RUST)
    assert order[:2] == ["src/lexer.rs", "src/parser.rs"]
    # rank 1 among units (after the tests: rank 11) is worth more than a 12th file document
    files = tuple(IndexHit(path=f"src/m{i}.rs", kind="file") for i in range(11))
    order = index_file_order(IndexHits(files=(*files, other), units=(*tests, source)), RUST)
    assert order.index("src/parser.rs") < order.index("src/m10.rs")


def test_relevant_functions_of_a_rust_question_put_test_functions_behind() -> None:
    from cq.index.fuse import fused_units
    from cq.index.query import IndexHit
    from cq.model.index_tuning import RUST_FUSION as RUST

    units = (
        IndexHit(path="tests/parse.rs", kind="fn", qualname="parses_an_empty_argument"),
        IndexHit(path="src/parser.rs", kind="fn", qualname="Parser::parse_argument"),
    )
    ranks = {"tests/parse.rs": 1, "src/parser.rs": 2}  # the fused file order put it first
    names = [u.qualname for u in fused_units(units, [], ranks, RUST)]
    assert names == ["Parser::parse_argument", "parses_an_empty_argument"]
    wanted = [u.qualname for u in fused_units(units, [], ranks, RUST, tests_wanted=True)]
    assert wanted[0] == "parses_an_empty_argument"  # a question about tests keeps them first


def test_a_one_line_rust_question_trusts_the_index_over_rg_s_guesses() -> None:
    """rg's first file against the index's first file: an issue text keeps rg's (a tie, rg
    first); a one-line question, whose patterns are mostly guessed from its prose, the
    index's."""
    from cq.index.fuse import fused_files, fusion_for, index_file_order
    from cq.index.query import IndexHit, IndexHits

    rg = ["src/output/help.rs"]
    for one_line, first in ((False, "src/output/help.rs"), (True, "src/builder/command.rs")):
        index = (IndexHit(path="src/builder/command.rs", kind="file"),)
        hits = IndexHits(files=index, one_line=one_line)
        fusion = fusion_for(rg, hits)
        order = [v.file for v in fused_files(rg, index_file_order(hits, fusion), fusion, hits)]
        assert order[0] == first


def test_a_bigger_rust_file_and_one_with_more_matching_units_win_a_tie() -> None:
    """rg's first file against the index's first file is a tie (rg's wins it); with the file
    prior a Rust issue's bigger file wins it, and a file holding several of the index's best
    units beats one holding none. A Python question's order keeps no prior."""
    from cq.index.fuse import fused_files, fusion_for, index_file_order
    from cq.index.query import IndexHit, IndexHits

    def first(rg: list[str], hits: IndexHits, sizes: dict[str, int]) -> str:
        fusion = fusion_for(rg, hits)
        index = index_file_order(hits, fusion)
        return fused_files(rg, index, fusion, hits, sizes=sizes)[0].file

    hits = IndexHits(files=(IndexHit(path="src/parser.rs", kind="file"),))
    rg = ["src/help.rs"]
    assert first(rg, hits, {}) == "src/help.rs"
    assert first(rg, hits, {"src/help.rs": 2_000, "src/parser.rs": 80_000}) == "src/parser.rs"
    assert first(rg, hits, {"src/help.rs": 80_000, "src/parser.rs": 2_000}) == "src/help.rs"
    py = IndexHits(files=(IndexHit(path="pkg/parser.py", kind="file"),))
    assert first(["pkg/help.py"], py, {"pkg/help.py": 2_000, "pkg/parser.py": 80_000}) == (
        "pkg/help.py"
    )
    # the same tie at equal sizes: the file holding three of the index's best units wins it
    same = {"src/help.rs": 10_000, "src/parser.rs": 10_000}
    for holder in ("src/help.rs", "src/parser.rs"):
        units = tuple(IndexHit(path=holder, kind="fn", qualname=f"f{i}") for i in range(3))
        held = IndexHits(files=hits.files, units=units)
        fusion = fusion_for(rg, held)
        assert fused_files(rg, ["src/parser.rs"], fusion, held, sizes=same)[0].file == holder


def test_a_rust_fn_only_the_index_found_is_listed_by_its_header(tmp_path: Path) -> None:
    archive = (
        "pub fn compress_backup(folder: &str) -> String {\n"
        "    // Pack every snapshot of the folder into one tarball for offsite retention.\n"
        "    folder.to_string()\n}\n"
    )
    crate = write_tree(
        tmp_path / "crate", {"src/lib.rs": "pub mod archive;\n", "src/archive.rs": archive}
    )
    question = "how are snapshots packed into a tarball for offsite retention?"
    header = "pub fn compress_backup(folder: &str) -> String"  # not the body's brace
    data = search(crate, question)
    assert [(f["file"], f["tier"]) for f in data["findings"]] == [("src/archive.rs", "index")]
    listed = next(s for s in data["sections"] if s["type"] == "functions")["functions"]
    assert [(f["name"], f["signature"]) for f in listed] == [
        ("src/archive.rs::compress_backup", header)
    ]
    md = run_cq("search", "-", "--root", str(crate), stdin=question)
    assert f"1. `src/archive.rs::compress_backup` (`src/archive.rs:1`) — `{header}`" in md.stdout
    assert "- `src/archive.rs:1:7` definition\n```rust\npub fn compress_backup(" in md.stdout


def test_a_method_many_types_implement_in_one_file_is_listed_once(tmp_path: Path) -> None:
    """Eight impls of one trait method in a file are one place to read, not eight entries of
    Relevant Functions: the best-ranked stands for them with their lines, and the list goes
    on to other functions (the validator, which the impls would have pushed out)."""
    kinds = ["Bool", "Falsey", "Boolish", "Enum", "Map", "TryMap", "Path", "Os"]
    impls = "".join(
        f"pub struct {k}Values;\n\nimpl ValueSource for {k}Values {{\n"
        f"    fn possible_values(&self) -> Vec<String> {{\n"
        f'        vec!["{k.lower()}".to_string()]\n    }}\n}}\n\n'
        for k in kinds
    )
    source = "pub trait ValueSource {\n    fn possible_values(&self) -> Vec<String>;\n}\n\n" + impls
    validator = (
        "use crate::values::ValueSource;\n\n"
        "/// Rejects a value that is not among the possible values of its argument.\n"
        "pub fn check_value(source: &dyn ValueSource, value: &str) -> bool {\n"
        "    source.possible_values().iter().any(|v| v == value)\n}\n"
    )
    crate = write_tree(
        tmp_path / "crate",
        {
            "src/lib.rs": "pub mod validator;\npub mod values;\n",
            "src/values.rs": source,
            "src/validator.rs": validator,
        },
    )
    question = "where are the possible values of an argument checked?"
    data = search(crate, question)
    section = next(s for s in data["sections"] if s["type"] == "functions")["functions"]
    in_values = [f for f in section if f["file"] == "src/values.rs"]
    assert len(in_values) == 1, [f["name"] for f in section]
    defined = [i for i, ln in enumerate(source.splitlines(), 1) if "fn possible_values" in ln]
    assert sorted([in_values[0]["line"], *in_values[0]["namesakes"]]) == defined
    assert "src/validator.rs::check_value" in functions(data)
    markdown = run_cq("search", "-", "--root", str(crate), stdin=question).stdout
    others = ", ".join(str(n) for n in sorted(in_values[0]["namesakes"])[:6])
    assert f"8 more `possible_values` in this file (lines {others}, …)" in markdown, markdown


def test_a_source_file_s_own_tests_do_not_answer_a_question(tmp_path: Path) -> None:
    """A ``mod tests`` inside a source file is test code, as ``tests/`` is: its functions, whose
    names say the question's words over and over, come after the function they test; a
    question about tests keeps them first."""
    template = (
        "/// Find the template a project asks for.\n"
        "pub fn locate_template(root: &str) -> String {\n    root.to_string()\n}\n\n"
        "#[cfg(test)]\nmod tests {\n    use super::*;\n\n"
        + "".join(
            f"    #[test]\n    fn locate_template_{case}() {{\n"
            f'        assert_eq!(locate_template("{case}"), "{case}");\n    }}\n\n'
            for case in ("finds_a_template", "locates_nested_template", "template_missing")
        )
        + "}\n"
    )
    crate = write_tree(tmp_path / "crate", {"src/lib.rs": template})
    question = "how is the template located?"
    assert functions(search(crate, question))[0] == "src/lib.rs::locate_template"
    tested = functions(search(crate, question, "--focus", "tests"))
    assert tested[0].startswith("src/lib.rs::tests::locate_template_"), tested


def test_a_question_s_auxiliary_is_does_not_pick_is_methods(tmp_path: Path) -> None:
    """ "how is a pipeline evaluated?": "is" is the question's auxiliary, not the ``is_`` of
    short predicates, and "evaluated" is what code calls ``eval``."""
    pipeline = (
        "pub struct Pipeline {\n    pub elements: Vec<String>,\n}\n\nimpl Pipeline {\n"
        + "".join(
            f"    pub fn is_{name}(&self) -> bool {{\n        self.elements.{test}\n    }}\n\n"
            for name, test in (("empty", "is_empty()"), ("single", "len() == 1"))
        )
        + "}\n"
    )
    evaluate = (
        "use crate::pipeline::Pipeline;\n\n"
        "/// Run each element of the pipeline, feeding its output to the next.\n"
        "pub fn eval_pipeline(pipeline: &Pipeline, input: String) -> String {\n"
        "    pipeline.elements.iter().fold(input, |acc, element| acc + element)\n}\n"
    )
    crate = write_tree(
        tmp_path / "crate",
        {
            "src/lib.rs": "pub mod eval;\npub mod pipeline;\n",
            "src/eval.rs": evaluate,
            "src/pipeline.rs": pipeline,
        },
    )
    names = functions(search(crate, "how is a pipeline evaluated?"))
    assert names[0] == "src/eval.rs::eval_pipeline", names
