"""Rust enrichment from tree-sitter on a real fixture crate file, in-process."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_tree
from enrich_hits import enrich_one

LIB = """\
use std::fmt;

#[derive(Debug, Clone)]
pub struct Registry<T> {
    items: Vec<T>,
}

impl<T: fmt::Debug> fmt::Display for Registry<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.items)
    }
}

pub(crate) fn register<T, U>(registry: &mut Registry<T>, item: T) -> usize
where
    T: Clone + fmt::Debug,
    U: Default,
{
    registry.items.push(item.clone());
    println!("registered {:?}", item);
    registry.items.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_one() {
        let mut r = Registry { items: Vec::new() };
        assert_eq!(register::<u8, ()>(&mut r, 1), 1);
    }
}
"""


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("rs"), {"src/lib.rs": LIB})


def test_trait_impl_method(root: Path) -> None:
    e = enrich_one(root, "src/lib.rs", "fmt", "fn fmt")
    assert e.status == "applied" and e.construct == "function_def"
    assert e.signature == "fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result"
    assert e.rust is not None
    assert e.rust.item_kind == "function_item"
    assert (e.rust.impl_trait, e.rust.impl_target) == ("fmt::Display", "Registry<T>")
    assert e.scope_chain == ("impl fmt::Display for Registry<T>",)
    assert e.stages is not None and e.stages.tree_sitter == "applied"


def test_generic_fn_with_where_clause(root: Path) -> None:
    e = enrich_one(root, "src/lib.rs", "register", "pub(crate) fn register")
    assert e.rust is not None
    assert e.rust.visibility == "pub(crate)"
    assert e.rust.generics == "<T, U>"
    assert e.rust.where_clause == "where T: Clone + fmt::Debug, U: Default,"
    assert e.signature == "\n".join(LIB.split("\n")[13:17])  # as written, where clause too
    assert e.rust.cfg_test is False and e.rust.is_test is False


def test_derive_attributes(root: Path) -> None:
    e = enrich_one(root, "src/lib.rs", "Registry", "pub struct Registry")
    assert e.construct == "struct_def"
    assert e.rust is not None
    assert e.rust.attributes == ("#[derive(Debug, Clone)]",)
    assert e.rust.derives == ("Debug", "Clone")


def test_cfg_test_module_and_test_fn(root: Path) -> None:
    call = enrich_one(root, "src/lib.rs", "register", "assert_eq!(register")
    assert call.rust is not None
    assert call.rust.cfg_test is True and call.rust.is_test is True
    assert call.rust.module == "tests"
    assert call.rust.macro == "assert_eq"
    assert call.scope_chain == ("tests", "registers_one")
    definition = enrich_one(root, "src/lib.rs", "registers_one", "fn registers_one")
    assert definition.rust is not None
    assert definition.rust.attributes == ("#[test]",) and definition.rust.is_test is True


def test_macro_call_and_method_call(root: Path) -> None:
    macro = enrich_one(root, "src/lib.rs", "println", "println!")
    assert macro.construct == "macro_call"
    assert macro.rust is not None and macro.rust.macro == "println"
    assert macro.scope_chain == ("register",)
    push = enrich_one(root, "src/lib.rs", "push", "items.push")
    assert push.construct == "call" and push.call is not None
    assert (push.call.target, push.call.receiver, push.call.method) == (
        "registry.items.push",
        "registry.items",
        "push",
    )
    scoped = enrich_one(root, "src/lib.rs", "new", "Vec::new()")
    assert scoped.call is not None and scoped.call.target == "Vec::new"


ITEMS = """\
pub trait Store {
    type Key;
}
pub enum Shape {
    Circle(f64),
    Rect { w: f64, h: f64 },
}
pub struct Pair<T>(pub T, T);
pub struct Named {
    pub(crate) width: u32,
}
macro_rules! square {
    ($x:expr) => {
        $x * $x
    };
}
"""


@pytest.fixture(scope="module")
def items(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("rs-items"), {"src/items.rs": ITEMS})


@pytest.mark.parametrize(
    "word, line_has, construct, kind, signature, scope",
    [
        ("Key", "type Key", "type_def", "associated_type", "type Key", ("Store",)),
        ("Circle", "Circle(", "variant_def", "enum_variant", "Circle(f64)", ("Shape",)),
        ("Rect", "Rect {", "variant_def", "enum_variant", "Rect", ("Shape",)),
        ("width", "width", "field_def", "field_declaration", "pub(crate) width: u32", ("Named",)),
        ("Pair", "struct Pair", "struct_def", "struct_item", "pub struct Pair<T>(pub T, T)", ()),
        ("square", "macro_rules!", "macro_def", "macro_definition", "macro_rules! square", ()),
    ],
)
def test_every_defined_item_has_kind_and_signature(
    items: Path, word: str, line_has: str, construct: str, kind: str, signature: str, scope
) -> None:
    e = enrich_one(items, "src/items.rs", word, line_has)
    assert e.construct == construct and e.signature == signature
    assert e.rust is not None and e.rust.item_kind == kind
    assert e.scope_chain == scope
