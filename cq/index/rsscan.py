"""Rust units by layout: item headers and, as rustfmt writes them, the closing brace at the
header's own indent. Doc comments (``///``) and attributes above an item are its doc; the
file's ``//!`` lines are the module's. Items inside a function are part of its text."""

from __future__ import annotations

import re

from cq.index.spans import LineCounter, LineHeads, own_text

# Headers (and closing braces, below) are found after a newline: see ``LineHeads``; the
# indentation is matched possessively, as in ``pyscan.py`` (why there).
_HEADS = LineHeads(
    r"([ \t]*+)(?:pub(?:\([^)\n]*\))?[ \t]+)?"
    r"(?:(?:const|async|unsafe|default|extern[ \t]+\"[^\"\n]*\")[ \t]+)*"
    r"(fn|struct|enum|trait|impl|mod|macro_rules!)(?=[\s<])"
)
_OPEN = re.compile(r"[{;]")
_IDENT = re.compile(r"[A-Za-z_]\w*")
# The self type after ``for``: a reference's lifetime and ``mut``/``dyn`` are not its name
# (``&'a mut Serializer<W>`` is ``Serializer``, as rg's scopes read it: ``scopes.py``).
_IMPL_TARGET = re.compile(
    r"(?:&\s*)?(?:'\w+\s+)?(?:mut\s+)?(?:dyn\s+)?(?<![\w'])(?!(?:mut|dyn)\b)((?:[A-Za-z_]\w*::)*[A-Za-z_]\w*)"
)
_INNER_DOC = re.compile(r"(?:[ \t]*//![^\n]*\n)+")
_CONTAINERS = ("impl", "trait", "mod")
_SIG_MAX = 300
_closers: dict[str, re.Pattern[str]] = {}

Row = tuple[str, str, int, str, str, str, str]


def rust_units(text: str) -> list[Row]:
    """(kind, qualname, line, names, signature, doc, own text) rows, module first."""
    lines = LineCounter(text)
    rows: list[list[object]] = []
    spans: list[tuple[int, int]] = []
    children: list[list[tuple[int, int]]] = []
    top: list[tuple[int, int]] = []
    stack: list[tuple[int, int, str, str]] = []  # (end, row index, qualname, kind)
    for m in _HEADS.finditer(text):
        start = m.start(1)
        while stack and stack[-1][0] <= start:
            stack.pop()
        if stack and stack[-1][3] not in _CONTAINERS:
            continue  # inside a fn (or a struct/enum body): part of its text
        opener = _OPEN.search(text, m.end())
        head_end = opener.start() if opener else len(text)
        end = _item_end(text, m.group(1), opener)
        keyword = m.group(2)
        kind = "macro" if keyword == "macro_rules!" else keyword
        header = text[m.end() : head_end]
        name, names = _impl_name(header) if kind == "impl" else _plain_name(header)
        if not name:
            continue
        qualname = f"{stack[-1][2]}::{name}" if stack else name
        (children[stack[-1][1]] if stack else top).append((start, end))
        signature = " ".join(text[start:head_end].split())[:_SIG_MAX]
        doc = _outer_doc(text, start)
        rows.append([kind, qualname, lines.at(start), " ".join((*qualname.split("::"), names))])
        rows[-1] += [signature, doc]
        spans.append((start, end))
        children.append([])
        stack.append((end, len(rows) - 1, qualname, kind))
    inner = _INNER_DOC.match(text)
    module_doc = _strip_markers(inner.group(0)) if inner else ""
    out: list[Row] = [
        ("module", "<module>", 1, "", "", module_doc, own_text(text, 0, len(text), top))
    ]
    for row, (start, end), kids in zip(rows, spans, children, strict=True):
        out.append((*row, own_text(text, start, end, kids)))  # type: ignore[arg-type]
    return out


def _item_end(text: str, indent: str, opener: re.Match[str] | None) -> int:
    """After the item's ``;`` or its closing brace at the header's indent."""
    if opener is None:
        return len(text)
    if opener.group(0) == ";":
        newline = text.find("\n", opener.end())
        return len(text) if newline == -1 else newline + 1
    closer = _closers.get(indent)
    if closer is None:
        closer = _closers[indent] = re.compile("\n" + re.escape(indent) + r"\}")
    same_line = text.find("}", opener.end(), text.find("\n", opener.end()) % (len(text) + 1))
    if same_line != -1 and text.count("{", opener.end(), same_line) == 0:
        return same_line + 1  # a one-line item: `struct Unit {}`, `fn f() { x }`
    m = closer.search(text, opener.end())
    return m.end() if m else len(text)


def _plain_name(header: str) -> tuple[str, str]:
    m = _IDENT.search(header)
    return (m.group(0), "") if m else ("", "")


def _impl_name(header: str) -> tuple[str, str]:
    """``impl<T> Trait for Type<T>`` -> ("Type", "Trait")."""
    plain = _strip_generics(header).split(" where ")[0]
    trait, sep, target = plain.partition(" for ")
    m = _IMPL_TARGET.search(target if sep else trait)
    if m is None:
        return "", ""
    name = m.group(1).rsplit("::", 1)[-1]
    t = _IDENT.findall(trait) if sep else []
    return name, (t[-1] if t else "")


def without_generics(text: str) -> str:
    """``text`` with every ``<...>`` (nested too) left out: ``Foo<T>::bar`` -> ``Foo::bar``."""
    out: list[str] = []
    depth = 0
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def _strip_generics(text: str) -> str:
    return " ".join(without_generics(text).split())


def _outer_doc(text: str, start: int) -> str:
    """``///`` lines (and attributes between them) right above ``start``."""
    docs: list[str] = []
    end = start
    while end > 0:
        line_start = text.rfind("\n", 0, end - 1) + 1
        line = text[line_start : end - 1].strip()
        if line.startswith("///"):
            docs.append(line[3:].strip())
        elif not line.startswith("#[") and not line.startswith("//"):
            break
        end = line_start
    return "\n".join(reversed(docs))


def _strip_markers(block: str) -> str:
    return "\n".join(line.strip()[3:].strip() for line in block.splitlines())
