"""A source file's lines, made once (``SourceFile.lines``) and counted as rg counts them."""

from __future__ import annotations

from pathlib import Path

from cq.parse.source import load_source


def _source(tmp_path: Path, data: bytes):  # type: ignore[no-untyped-def]
    (tmp_path / "m.py").write_bytes(data)
    loaded = load_source(tmp_path, "m.py", "python")
    assert loaded is not None
    return loaded.source


def test_lines_split_at_newlines_only(tmp_path: Path) -> None:
    source = _source(tmp_path, b"a = 1\r\n\x0c\r\ndef f():\n    pass\n")
    assert source.lines() == ["a = 1", "\x0c", "def f():", "    pass", ""]
    assert source.lines() is source.lines()  # made once, shared by every stage


def test_a_file_that_is_not_utf8_has_no_lines(tmp_path: Path) -> None:
    assert _source(tmp_path, b"x = '\xff'\n").lines() is None
