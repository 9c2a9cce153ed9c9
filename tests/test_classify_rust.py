"""Rust classification of constructs the main fixture leaves out (code inside macro
invocations, pattern bindings, type bodies), through the real CLI (real rg, real
tree-sitter)."""

from __future__ import annotations

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

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


PATTERNS = """\
pub enum Kind {
    target,
    Named { target: u8 },
}
pub struct Wrap(pub u8, target);
fn f(k: Kind) {
    match k {
        Kind::Named { target } if target > 0 => {}
        Kind::Named { target: x } => {}
        Some(target) | Other(target) => {}
        target => {}
    }
    if let Some(target) = v && let Ok(y) = target {}
    while let Some(target) = it.next() {}
    match n { TARGET => {}, _ => {} }
}
"""


@pytest.fixture(scope="module")
def hits(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int, int], dict]:
    root = write_tree(
        tmp_path_factory.mktemp("rust"), {"src/macros.rs": MACROS, "src/patterns.rs": PATTERNS}
    )
    run = run_cq("search", "target", "-i", "--root", str(root), "--format", "json", "--limit", "0")
    assert run.returncode == 0, run.stderr
    return {(f["file"], f["line"], f["col"]): f for f in run.json()["findings"]}


@pytest.fixture(scope="module")
def found(hits: dict) -> dict[tuple[int, int], dict]:
    return {(line, col): f for (file, line, col), f in hits.items() if file == "src/macros.rs"}


def _at(found: dict, line: int, nth: int = 0, source: str = MACROS) -> dict:
    text = source.splitlines()[line - 1]
    col = -1
    for _ in range(nth + 1):
        col = text.lower().index("target", col + 1)
    return found[(line, col)]


@pytest.mark.parametrize(
    "line, nth, category, scope",
    [
        (2, 0, "docstring_match", None),
        (3, 0, "definition", "target"),  # an item inside cfg_rt! { ... }
        (4, 0, "assignment", "target"),
        (5, 0, "reference", "target"),
        (8, 0, "definition", "Target"),  # a struct two macros deep
        (8, 1, "definition", "Target"),  # its field
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


@pytest.mark.parametrize(
    "line, nth, category, scope",
    [
        (2, 0, "definition", "Kind"),  # a variant, in its enum
        (3, 0, "definition", "Kind"),  # a variant's field
        (5, 0, "annotation", "Wrap"),  # a tuple struct's field type
        (8, 0, "assignment", "f"),  # match arm binding (shorthand field)
        (8, 1, "reference", "f"),  # the guard reads it
        (9, 0, "reference", "f"),  # a field name, bound to x
        (10, 0, "assignment", "f"),  # or-pattern bindings
        (10, 1, "assignment", "f"),
        (11, 0, "assignment", "f"),  # a catch-all binding
        (13, 0, "assignment", "f"),  # if let
        (13, 1, "reference", "f"),
        (14, 0, "assignment", "f"),  # while let
        (15, 0, "reference", "f"),  # an upper-case name in a pattern is a constant
    ],
)
def test_patterns_and_type_bodies(hits: dict, line: int, nth: int, category: str, scope) -> None:
    found = {(ln, col): f for (file, ln, col), f in hits.items() if file == "src/patterns.rs"}
    hit = _at(found, line, nth, PATTERNS)
    assert (hit["category"], hit["containing_scope"]) == (category, scope)
