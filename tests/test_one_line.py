"""A def/fn header on one line, as the report's lists and Relevant Functions show it."""

from __future__ import annotations

import pytest

from cq.parse.one_line import one_line_header


@pytest.mark.parametrize(
    ("lines", "language", "header"),
    [
        (["def f(sep='#'):", "    if sep:", "        pass"], "python", "def f(sep='#'):"),
        (
            ["def f(", "    a,  # note", "    b=1,", ") -> int:  # why", "    return a"],
            "python",
            "def f(a, b=1) -> int:",
        ),
        (
            ["    async def g(self) -> None:", "        pass"],
            "python",
            "async def g(self) -> None:",
        ),
        (
            ["pub fn f<T>(a: T) -> u8 where", "    T: X,", "{", "    0", "}"],
            "rust",
            "pub fn f<T>(a: T) -> u8 where T: X",
        ),
        (["fn area(&self) -> f64;", "fn next(&self);"], "rust", "fn area(&self) -> f64;"),
        (["pub fn run() -> u8 { 0 }"], "rust", "pub fn run() -> u8"),
    ],
)
def test_a_header_is_cut_where_its_body_starts(
    lines: list[str], language: str, header: str
) -> None:
    assert one_line_header(lines, language) == header


def test_a_header_longer_than_the_lines_given_ends_with_an_ellipsis() -> None:
    assert one_line_header(["    def __init__(", "        self,"], "python") == "def __init__( …"
