"""Code units as the index sees them: qualified names, definition lines, signatures, docs and
each unit's own text (no text indexed twice)."""

from __future__ import annotations

from cq.index.units import file_units
from cq.index.words import split_words

PY = '''"""Module doc."""
import os

class FileUploadHandler(Base):
    """Handle uploads."""
    chunk = 10

    def receive(self, data: bytes,
                more: int) -> None:
        """Receive a chunk."""
        def inner():
            pass
        return inner

    async def close(self): pass
    size = 3


def top(a):
    # a comment
    return "a string"
LIMIT = 2
'''

RS = """//! Crate doc.
use std::fmt;

/// A point.
#[derive(Debug)]
pub struct Point { x: i32 }

impl<T: Clone> fmt::Display for Wrapper<T> where T: Debug {
    /// Format it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn helper() {}
        write!(f, "{}", self.0)
    }
}

pub mod parse {
    pub(crate) async fn run_parser(x: u8) -> u8 {
        x
    }
}

macro_rules! my_mac {
    () => {};
}

pub trait Shape {
    fn area(&self) -> f64;
}
"""


def test_python_units() -> None:
    units = {u.qualname: u for u in file_units(PY, "python")}
    assert list(units) == [
        "<module>",
        "FileUploadHandler",
        "FileUploadHandler.receive",
        "FileUploadHandler.close",
        "top",
    ]
    receive = units["FileUploadHandler.receive"]
    assert (receive.kind, receive.line, receive.doc) == ("function", 8, "Receive a chunk.")
    assert receive.signature == "def receive(self, data: bytes, more: int) -> None:"
    assert "def inner" in receive.text  # nested functions stay in their function
    cls = units["FileUploadHandler"]
    assert "size = 3" in cls.text and "def receive" not in cls.text
    assert units["FileUploadHandler.close"].text.strip() == "async def close(self): pass"
    assert "a comment" in units["top"].text and "a string" in units["top"].text
    module = units["<module>"]
    assert (
        module.doc == "Module doc." and "LIMIT = 2" in module.text and "def top" not in module.text
    )


def test_rust_units() -> None:
    units = {u.qualname: u for u in file_units(RS, "rust")}
    assert list(units) == [
        "<module>",
        "Point",
        "Wrapper",
        "Wrapper::fmt",
        "parse",
        "parse::run_parser",
        "my_mac",
        "Shape",
        "Shape::area",
    ]
    assert units["<module>"].doc == "Crate doc."
    assert units["Point"].doc == "A point." and units["Point"].kind == "struct"
    assert units["Wrapper"].kind == "impl" and "Display" in units["Wrapper"].names
    fmt = units["Wrapper::fmt"]
    assert (fmt.line, fmt.doc) == (10, "Format it.") and "fn helper" in fmt.text
    assert units["parse::run_parser"].signature == "pub(crate) async fn run_parser(x: u8) -> u8"
    assert units["my_mac"].kind == "macro" and units["Shape::area"].line == 27


def test_identifiers_split_the_way_people_write_about_them() -> None:
    assert split_words("FileUploadHandler") == "fileuploadhandler file upload handler"
    assert split_words("FILE_UPLOAD_PERMISSIONS") == (
        "file_upload_permissions file upload permissions"
    )
    assert split_words("parse HTTPServer x") == "parse httpserver http server x"


def test_a_rust_impl_for_a_reference_is_named_for_its_type_as_rg_scopes_are() -> None:
    """``impl<'a> Tr for &'a mut Ser<W>`` holds ``Ser``'s methods: a unit named for the
    lifetime (``a::f``) would never meet rg's scope ``Ser::f`` in Relevant Functions."""
    from cq.index.scopes import rg_scope_key

    source = (
        "impl<'a, W: Write> serde::Serializer for &'a mut Ser<W> {\n"
        "    fn serialize_unit(self) -> Result<()> {\n        Ok(())\n    }\n}\n"
        "impl Shape for &mut [u8] {\n    fn area(&self) -> f64 {\n        0.0\n    }\n}\n"
    )
    names = [u.qualname for u in file_units(source, "rust")]
    assert names == ["<module>", "Ser", "Ser::serialize_unit", "u8", "u8::area"]
    scope = "impl serde::Serializer for &'a mut Ser<W>::serialize_unit"  # as cq's scopes read
    assert rg_scope_key("ser.rs", scope) == "Ser::serialize_unit"


def test_a_file_with_crlf_line_ends_has_the_units_of_the_same_file_with_lf() -> None:
    """A Windows-edited module: a header over lines still ends at its colon, so its
    signature and docstring are indexed as they are with ``\\n`` line ends."""
    crlf = PY.replace("\n", "\r\n")
    lf_units = [(u.qualname, u.line, u.signature, u.doc) for u in file_units(PY, "python")]
    crlf_units = [(u.qualname, u.line, u.signature, u.doc) for u in file_units(crlf, "python")]
    assert crlf_units == lf_units
