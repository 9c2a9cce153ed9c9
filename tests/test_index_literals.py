"""A unit's words without its string literals (``cq.index.literals``): what is code stays."""

from __future__ import annotations

from cq.index.coverage import words_of
from cq.index.literals import without_strings
from cq.index.units import file_units
from cq.rewrite import stem


def test_python_strings_go_and_code_comments_and_f_string_holes_stay() -> None:
    text = (
        'x = f"near {self.image_path} {{border}}" + \'edge\'  # don\'t "skip"\n'
        'y = """spans\nlines"""; z = rb\'raw\'\n'
        "w = 'unclosed\n"
        "v = after\n"
    )
    kept = without_strings(text, rust=False).split()
    assert "self.image_path" in kept and "after" in kept and '"skip"' in kept
    assert not {"near", "edge", "spans", "lines", "raw", "unclosed", "border"} & set(kept)


def test_rust_strings_go_and_lifetimes_and_char_quotes_do_not_open_one() -> None:
    text = (
        'let s = r#"raw "quoted""#; fn f<\'a>(x: &\'a str) {\n'
        '    let c = \'"\'; println!("near {}", keep_me) // a "comment"\n}'
    )
    kept = without_strings(text, rust=True)
    assert "keep_me" in kept and "<'a>" in kept and '"comment"' in kept
    assert "raw" not in kept and "near" not in kept and "quoted" not in kept


def test_a_units_words_keep_its_docstring_and_leave_its_messages() -> None:
    source = '''def check(size):
    """Refuse a size near the border."""
    if size < 0:
        raise ValueError("negative sizes are not supported")
    return size
'''
    unit = {u.qualname: u for u in file_units(source, "python")}["check"]
    held = words_of(unit, strings=False)
    assert {stem(w) for w in ("refuse", "size", "border", "ValueError")} <= held
    assert not {stem(w) for w in ("negative", "supported")} & held
    assert {stem(w) for w in ("negative", "supported")} <= words_of(unit)
