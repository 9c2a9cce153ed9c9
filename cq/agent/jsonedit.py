"""Add, replace and remove one member of a JSON object in place, leaving every other byte.

Agents keep their MCP servers in JSON files the user (or the agent itself) also edits:
``.mcp.json``, ``~/.claude.json``. Re-serialising such a file would reformat it, so cq edits
the text: ``document`` validates it and maps the top-level object's members to their spans,
``members`` does the same for a nested object, and ``add`` / ``replace`` / ``remove`` splice
one member, laid out like its siblings (indent unit, ``": "``, one line or several).
"""

from __future__ import annotations

import json
from json.decoder import scanstring
from typing import Any

import msgspec

from cq.agent.nesting import too_deep

_WS = " \t\n\r"
_DECODER = json.JSONDecoder()


class Member(msgspec.Struct, frozen=True):
    """One ``"key": value`` pair of an object: the offsets of its key and of its value."""

    key: str
    key_start: int  # the key's opening quote
    key_end: int  # just past its closing quote
    value_start: int
    value_end: int


class Obj(msgspec.Struct, frozen=True):
    """A JSON object in the text: ``start`` is its ``{``, ``end`` is just past its ``}``."""

    start: int
    end: int
    members: tuple[Member, ...]

    def find(self, key: str) -> Member | None:
        """The member named ``key``; the last one if repeated, as JSON parsers read it."""
        return next((m for m in reversed(self.members) if m.key == key), None)


class NotAnObject(ValueError):
    """The text is not valid JSON, or its top level is not an object."""


def canonical(value: Any) -> str:
    """One spelling per value, so a value can be compared with what cq wrote by hash."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def document(text: str) -> Obj:
    if deep := too_deep(text):
        raise NotAnObject(deep)
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise NotAnObject(f"not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise NotAnObject("its top level is not a JSON object")
    return members(text, _skip(text, 0))


def members(text: str, start: int) -> Obj:
    """The members of the object whose ``{`` is at ``start`` (the text is valid JSON)."""
    i = _skip(text, start + 1)
    found: list[Member] = []
    while text[i] != "}":
        key, key_end = scanstring(text, i + 1)
        value_start = _skip(text, _skip(text, key_end) + 1)
        _, value_end = _DECODER.raw_decode(text, value_start)
        found.append(Member(key, i, key_end, value_start, value_end))
        i = _skip(text, value_end)
        if text[i] == ",":
            i = _skip(text, i + 1)
    return Obj(start, i + 1, tuple(found))


def add(text: str, obj: Obj, key: str, value: Any) -> str:
    """``text`` with ``"key": value`` appended to ``obj``."""
    unit = _unit(text)
    if not obj.members:
        nl = _newline(text)
        outer = _line_indent(text, obj.start)
        inner = outer + unit
        body = f"{json.dumps(key)}: {_render(value, nl + inner, unit)}"
        return f"{text[: obj.start + 1]}{nl}{inner}{body}{nl}{outer}{text[obj.end - 1 :]}"
    first, last = obj.members[0], obj.members[-1]
    line, gap = _line(text, obj), _gap(text, obj)
    colon = text[first.key_end : first.value_start]
    lead = "," + (gap if line is None else line)
    member = f"{lead}{json.dumps(key)}{colon}{_render(value, line, unit, gap)}"
    return text[: last.value_end] + member + text[last.value_end :]


def replace(text: str, obj: Obj, member: Member, value: Any) -> str:
    """``text`` with ``member``'s value replaced by ``value``."""
    rendered = _render(value, _line(text, obj), _unit(text), _gap(text, obj))
    return text[: member.value_start] + rendered + text[member.value_end :]


def remove(text: str, obj: Obj, member: Member) -> str:
    """``text`` without ``member`` and the comma and whitespace that separated it."""
    index = obj.members.index(member)
    if len(obj.members) == 1:
        return text[: obj.start + 1] + text[obj.end - 1 :]
    if index > 0:  # from the end of the previous value: undoes what ``add`` inserted
        return text[: obj.members[index - 1].value_end] + text[member.value_end :]
    return text[: member.key_start] + text[obj.members[1].key_start :]


def _line(text: str, obj: Obj) -> str | None:
    """The newline and indentation before each of ``obj``'s members (it has some); None when
    they share one line."""
    lead = text[obj.start + 1 : obj.members[0].key_start]
    return _newline(text) + lead.rsplit("\n", 1)[1] if "\n" in lead else None


def _gap(text: str, obj: Obj) -> str:
    """A space if ``obj``'s first member has whitespace after its colon, else nothing."""
    first = obj.members[0]
    sep = text[first.key_end : first.value_start]
    return " " if sep[sep.index(":") + 1 :] else ""


def _unit(text: str) -> str:
    """The file's indent unit: the indentation of its first indented line (else two spaces)."""
    for line in text.splitlines()[1:]:
        body = line.lstrip(" \t")
        if body and len(body) < len(line):
            return line[: len(line) - len(body)]
    return "  "


def _render(value: Any, line: str | None, unit: str, gap: str = " ") -> str:
    """``value`` as JSON: on one line (``line`` None), or over several, indented by ``unit``
    from ``line``, the newline and indentation of the line it starts on."""
    if line is None:
        return json.dumps(value, ensure_ascii=False, separators=("," + gap, ":" + gap))
    text = json.dumps(value, indent=unit, ensure_ascii=False, separators=(",", ":" + gap))
    return text.replace("\n", line)


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _line_indent(text: str, pos: int) -> str:
    line_start = text.rfind("\n", 0, pos) + 1
    line = text[line_start:pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i
