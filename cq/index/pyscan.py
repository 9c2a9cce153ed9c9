"""Python units by indentation: ``def``/``class`` headers and where their block ends.

A block ends at the next line indented no deeper than its header that starts code (not a
blank line, a comment or a closing bracket). The module itself is a unit (its docstring and
the code outside every top-level definition: settings, constants, imports).
"""

from __future__ import annotations

import re

from cq.index.spans import LineCounter, LineHeads, own_text

# Headers (and block ends, below) are found after a newline: see ``LineHeads``. The
# indentation is matched possessively (``*+``, ``{0,n}+``): a line that is not a header gives
# up at its first other character instead of backtracking through its indentation one space
# at a time, every unit identical (``python -m bench.index_speed``; figures:
# bench/results/2026-11-29-figures-from-cq.md).
_HEADS = LineHeads(r"([ \t]*+)(?:async[ \t]+)?(def|class)[ \t]+([A-Za-z_]\w*)")
_SIG_END = re.compile(r":[ \t]*(?:#[^\r\n]*)?\r?$", re.M)  # CRLF files too
_DOC = re.compile(r"\s*[rRuU]?(\"\"\"|'''|\"|')")
_LEADING_COMMENTS = re.compile(r"(?:[ \t\r\n]*#[^\n]*)*")
_SIG_MAX = 2000  # characters searched for a signature's closing colon
_ends: dict[int, re.Pattern[str]] = {}

Row = tuple[str, str, int, str, str, str, str]


def python_units(text: str) -> list[Row]:
    """(kind, qualname, line, names, signature, doc, own text) rows, module first."""
    lines = LineCounter(text)
    spans: list[tuple[int, int]] = []
    rows: list[list[object]] = []
    children: list[list[tuple[int, int]]] = []
    top: list[tuple[int, int]] = []
    stack: list[tuple[int, int, str, str]] = []  # (end, row index, qualname, kind)
    for m in _HEADS.finditer(text):
        start = m.start(1)
        while stack and stack[-1][0] <= start:
            stack.pop()
        if stack and stack[-1][3] == "function":
            continue  # nested in a function: part of its text
        indent = len(m.group(1))
        first_line_end = _line_end(text, m.end())
        end = _block_end(text, indent, first_line_end)
        sig_end = _signature_end(text, m.end(), end)
        kind = "class" if m.group(2) == "class" else "function"
        name = m.group(3)
        qualname = f"{stack[-1][2]}.{name}" if stack else name
        (children[stack[-1][1]] if stack else top).append((start, end))
        doc = docstring(text, sig_end)
        signature = " ".join(text[start:sig_end].split())
        rows.append([kind, qualname, lines.at(start), qualname.replace(".", " "), signature, doc])
        spans.append((start, end))
        children.append([])
        stack.append((end, len(rows) - 1, qualname, kind))
    module = own_text(text, 0, len(text), top)
    out: list[Row] = [("module", "<module>", 1, "", "", docstring(text, 0), module)]
    for row, (start, end), kids in zip(rows, spans, children, strict=True):
        out.append((*row, own_text(text, start, end, kids)))  # type: ignore[arg-type]
    return out


def _line_end(text: str, pos: int) -> int:
    newline = text.find("\n", pos)
    return len(text) if newline == -1 else newline


def _signature_end(text: str, pos: int, block_end: int) -> int:
    """After the colon that closes a (possibly multi-line) header; a one-line ``def f(): x``
    has no such colon inside its block: then the header is its first line."""
    m = _SIG_END.search(text, pos, min(block_end, pos + _SIG_MAX))
    return m.end() if m else _line_end(text, pos)


def _block_end(text: str, indent: int, pos: int) -> int:
    pattern = _ends.get(indent)
    if pattern is None:
        pattern = _ends[indent] = re.compile(rf"\n[ \t]{{0,{indent}}}+[^ \t\r\n#)\]}}]")
    m = pattern.search(text, pos)
    return m.start() + 1 if m else len(text)


def docstring(text: str, pos: int) -> str:
    """The string literal that opens the block at ``pos``, if any (module: skip comments)."""
    if pos == 0:
        pos = _LEADING_COMMENTS.match(text).end()  # type: ignore[union-attr]
    m = _DOC.match(text, pos)
    if m is None:
        return ""
    quote = m.group(1)
    close = text.find(quote, m.end())
    return text[m.end() : close] if close != -1 else ""
