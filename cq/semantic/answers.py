"""Turning LSP answers into cq facts: positions, hover text, locations, module names.

Pure functions (no server): LSP positions count UTF-16 code units from 0 (Pyrefly announces
``positionEncoding: utf-16``), cq's columns count characters from 0 and lines from 1.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from cq.model import SemanticDefinition

_TYPE_CHARS = 160
_FENCE = re.compile(r"```[a-z]*\n(.*?)\n```", re.S)
_HOVER_KIND = re.compile(
    r"^\((?:function|method|class|variable|attribute|parameter|module|"
    r"property|type alias|type parameter|constant)\)\s+"
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Where a path outside the root stops being a location and starts being a module name.
_LIB_MARKERS = (
    re.compile(r"/(?:site|dist)-packages/"),
    re.compile(r"/pyrefly_bundled_typeshed_[^/]+/"),
    re.compile(r"/typeshed[^/]*/(?:stdlib|stubs/[^/]+)/"),
    re.compile(r"/lib/python3\.\d+t?/"),
)


def utf16_col(line: str, col: int) -> int:
    """Character column -> UTF-16 code units before it."""
    return col + sum(1 for ch in line[:col] if ord(ch) > 0xFFFF)


def char_col(line: str, units: int) -> int:
    """UTF-16 code units -> character column."""
    count = 0
    for index, ch in enumerate(line):
        if count >= units:
            return index
        count += 2 if ord(ch) > 0xFFFF else 1
    return len(line)


def hover_type(hover: Any) -> str | None:
    """The first code block of a hover (or its first line), on one line, without the
    ``(function) name:`` prefix Pyrefly puts before a signature."""
    if not isinstance(hover, dict):
        return None
    contents = hover.get("contents")
    text = contents.get("value", "") if isinstance(contents, dict) else str(contents or "")
    block = _FENCE.search(text)
    body = block.group(1) if block else text.strip().split("\n", 1)[0]
    one = " ".join(body.split())
    one = re.sub(r"\(\s+", "(", one)
    one = re.sub(r",?\s+\)", ")", one)
    one = _HOVER_KIND.sub("", one)
    name, sep, rest = one.partition(": ")
    if sep and (rest.startswith(("def ", "async def ", "class ", "@overload ")) or name == "class"):
        one = rest
    one = one.removeprefix("@overload ")
    one = one.split(": ... ", 1)[0]  # overloads: the first signature
    one = one.removesuffix(": ...").strip()
    if not one:
        return None
    return one if len(one) <= _TYPE_CHARS else one[: _TYPE_CHARS - 1] + "…"


def locations(answer: Any) -> list[tuple[str, int, int]]:
    """(absolute path, 0-based line, UTF-16 column) of a Location / Location[] / LocationLink[]
    answer, in the order given."""
    items = answer if isinstance(answer, list) else [answer] if answer else []
    out = []
    for item in items:
        if not isinstance(item, dict):
            continue
        uri = item.get("uri") or item.get("targetUri")
        span = item.get("range") or item.get("targetSelectionRange") or {}
        start = span.get("start") or {}
        path = uri_path(uri) if isinstance(uri, str) else None
        if path is not None:
            out.append((path, int(start.get("line", 0)), int(start.get("character", 0))))
    return out


def uri_path(uri: str) -> str | None:
    # a name that is not UTF-8 as cq reads it (os.fsdecode), the name of the file's findings
    parsed = urlparse(uri)
    return unquote(parsed.path, errors="surrogateescape") if parsed.scheme == "file" else None


def relative_to_root(path: str, root: str) -> str | None:
    """``path`` relative to ``root`` with forward slashes, or None when outside it."""
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return None


def module_of(relative: str) -> str:
    """``pkg/mod.py`` -> ``pkg.mod``, ``pkg/__init__.py`` -> ``pkg``: a root file's module as
    imported from the root."""
    parts = relative.split("/")
    parts[-1] = re.sub(r"\.pyi?$", "", parts[-1])
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def module_name(path: str, name: str | None) -> str:
    """``/…/lib/python3.11/typing.py`` + ``Protocol`` -> ``typing.Protocol``: the dotted name of
    a definition outside the root (after the last library marker, else the file's stem)."""
    tail = path
    for marker in _LIB_MARKERS:
        found = list(marker.finditer(path))
        if found:
            tail = path[found[-1].end() :]
            break
    else:
        tail = Path(path).name
    parts = [p for p in re.split(r"/+", tail) if p]
    if parts:
        parts[-1] = re.sub(r"\.pyi?$", "", parts[-1])
        if parts[-1] == "__init__":
            parts.pop()
    dotted = ".".join(parts)
    return f"{dotted}.{name}" if name and dotted else (dotted or name or "")


def identifier_at(line: str, col: int) -> str | None:
    found = _IDENT.match(line, col)
    return found.group(0) if found else None


def definition_fact(
    path: str, line0: int, units: int, root: str, read_line: Any, owner: str | None = None
) -> SemanticDefinition:
    """A definition location as cq reports it: in the root by place, outside it by name
    (with its class ``owner``, when it has one)."""
    text = read_line(path, line0) or ""
    col = char_col(text, units)
    relative = relative_to_root(path, root)
    if relative is not None:
        return SemanticDefinition(file=relative, line=line0 + 1, col=col, via="pyrefly")
    name = identifier_at(text, col)
    if owner and name:
        name = f"{owner}.{name}"
    return SemanticDefinition(module=module_name(path, name), via="pyrefly")
