"""Rust classification of constructs the main fixture leaves out: code inside macro
invocations, through the real CLI (real rg, real tree-sitter)."""

from __future__ import annotations

import pytest
from conftest import run_cq, write_tree

MACROS = """\
cfg_rt! {
    /// Spawns target work.
    pub fn target<F>(f: F) -> u8 where F: Fn() {
        let target = 1;
        other(target)
    }
    cfg_fs! {
        pub(crate) struct Target { target: u8 }
    }
}
fn g() {
    assert_eq!(target(1), x.target());
    println!("{}", target);
    tokio::select! { target = rx.recv() => {} }
    thread_local! { static target: u8 = 0; }
}
"""


@pytest.fixture(scope="module")
def found(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[int, int], dict]:
    root = write_tree(tmp_path_factory.mktemp("rust"), {"src/macros.rs": MACROS})
    run = run_cq("search", "target", "--root", str(root), "--format", "json", "--limit", "0")
    assert run.returncode == 0, run.stderr
    return {(f["line"], f["col"]): f for f in run.json()["findings"]}


def _at(found: dict, line: int, nth: int = 0) -> dict:
    text = MACROS.splitlines()[line - 1]
    col = -1
    for _ in range(nth + 1):
        col = text.index("target", col + 1)
    return found[(line, col)]


@pytest.mark.parametrize(
    "line, nth, category, scope",
    [
        (2, 0, "docstring_match", None),
        (3, 0, "definition", "target"),  # an item inside cfg_rt! { ... }
        (4, 0, "assignment", "target"),
        (5, 0, "reference", "target"),
        (8, 0, "definition", None),  # a field of a struct two macros deep
        (12, 0, "callsite", "g"),  # calls inside assert_eq!(...)
        (12, 1, "callsite", "g"),
        (13, 0, "reference", "g"),
        (14, 0, "reference", "g"),  # select! is no Rust: its tokens stay references
        (15, 0, "definition", "g"),  # thread_local! { static ... }
    ],
)
def test_code_inside_macros(found: dict, line: int, nth: int, category: str, scope) -> None:
    hit = _at(found, line, nth)
    assert (hit["category"], hit["containing_scope"]) == (category, scope)


def test_item_inside_a_macro_is_the_answer(found: dict) -> None:
    definition = _at(found, 3)
    assert definition["enrichment"]["signature"] == "pub fn target<F>(f: F) -> u8 where F: Fn()"
    assert definition["enrichment"]["rust"]["visibility"] == "pub"
    assert definition["enrichment"]["rust"]["macro"] == "cfg_rt"
    call = _at(found, 12, 1)
    assert call["enrichment"]["call"]["receiver"] == "x"
