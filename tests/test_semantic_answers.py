"""LSP answers turned into cq facts: hover text, positions, module names (pure functions)."""

from __future__ import annotations

from cq.semantic.answers import char_col, hover_type, locations, module_name, utf16_col


def test_hover_signature_is_one_trimmed_line() -> None:
    hover = {
        "contents": {
            "kind": "markdown",
            "value": "```python\n(method) send: def send(\n    self: Client,\n    data: bytes\n)"
            " -> int: ...\n```\n\nGo to [Client](file:///x.py#L8,7)",
        }
    }
    assert hover_type(hover) == "def send(self: Client, data: bytes) -> int"


def test_hover_of_a_value_keeps_its_name_and_type() -> None:
    hover = {"contents": {"kind": "markdown", "value": "```python\n(variable) total: int\n```"}}
    assert hover_type(hover) == "total: int"
    assert hover_type(None) is None


def test_columns_convert_between_characters_and_utf16_units() -> None:
    line = "x = '🐍' + name"
    col = line.index("name")
    assert utf16_col(line, col) == col + 1
    assert char_col(line, utf16_col(line, col)) == col


def test_definitions_outside_the_root_are_named_by_module() -> None:
    assert module_name("/usr/lib/python3.11/typing.py", "Protocol") == "typing.Protocol"
    assert module_name("/v/lib/python3.12/site-packages/pkg/__init__.py", "f") == "pkg.f"
    assert module_name("/tmp/pyrefly_bundled_typeshed_ab12/os/path.pyi", "join") == "os.path.join"


def test_locations_read_location_and_location_link_answers() -> None:
    link = {
        "targetUri": "file:///a%20b/m.py",
        "targetSelectionRange": {"start": {"line": 3, "character": 4}},
    }
    plain = {"uri": "file:///c.py", "range": {"start": {"line": 0, "character": 1}}}
    assert locations([link, plain]) == [("/a b/m.py", 3, 4), ("/c.py", 0, 1)]
    assert locations(None) == []


def test_an_overloaded_function_shows_its_first_signature() -> None:
    value = (
        "```python\njoin: @overload def join(a: LiteralString, /, *paths: LiteralString)"
        " -> LiteralString: ...\ndef join(a: StrPath, /, *paths: StrPath) -> str: ...\n```"
    )
    hover = {"contents": {"kind": "markdown", "value": value}}
    assert (
        hover_type(hover) == "def join(a: LiteralString, /, *paths: LiteralString) -> LiteralString"
    )
