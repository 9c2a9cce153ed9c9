"""JSON rendering with msgspec: field order is struct order, so output is stable.

Compact (one line, no indentation): the reader is a program or an agent paying per token;
pipe through ``python -m json.tool`` or ``jq`` to read it.
"""

from __future__ import annotations

from typing import Any

import msgspec

from cq.model import FollowUps, SearchResult, Section

# ``SearchResult`` fields the JSON report never carries: ``plan`` is what the markdown says;
# ``files`` is ``-l``/``-c``'s list, which prints no JSON.
_NOT_IN_JSON = ("plan", "files", "question")


def render_json(result: SearchResult) -> str:
    """The whole result as compact JSON text ending in a newline. A file name that is not
    UTF-8 (its undecodable bytes read as lone surrogates, which msgspec will not write) is
    written as JSON's ``\\udcXX`` escapes, which read back as the same name. The report's
    ``plan`` (what the markdown says) is left out: the JSON carries the facts it is made of;
    so is ``files``, which only ``-l``/``-c`` print (``_NOT_IN_JSON``)."""
    result = msgspec.structs.replace(result, **dict.fromkeys(_NOT_IN_JSON, msgspec.UNSET))
    result = msgspec.structs.replace(result, sections=tuple(map(_cli_only, result.sections)))
    try:
        return msgspec.json.encode(result).decode() + "\n"
    except UnicodeEncodeError:
        import json

        return json.dumps(msgspec.to_builtins(result), separators=(",", ":")) + "\n"


def _cli_only(section: Section) -> Section:
    """A follow-up as the JSON report carries it: its command line, not the MCP tool's
    arguments (the markdown of a tool call prints those)."""
    if not isinstance(section, FollowUps):
        return section
    plain = tuple(msgspec.structs.replace(f, arguments=msgspec.UNSET) for f in section.follow_ups)
    return msgspec.structs.replace(section, follow_ups=plain)


def report_schema() -> dict[str, Any]:
    """The JSON Schema of what ``render_json`` writes (``cq schema``, the MCP tool's output
    schema): ``SearchResult``'s, without the fields it never writes and the types only they
    use, so a reader is promised nothing the report does not hold."""
    schema = msgspec.json.schema(SearchResult)
    defs = schema["$defs"]
    result = defs["SearchResult"]
    for name in _NOT_IN_JSON:
        result["properties"].pop(name)
    defs["FollowUp"]["properties"].pop("arguments")
    reached: set[str] = set()
    todo = ["SearchResult"]
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo.extend(_refs(defs[name]))
    schema["$defs"] = {name: body for name, body in defs.items() if name in reached}
    return schema


def _refs(node: object) -> list[str]:
    """The ``$defs`` names ``node`` refers to, at any depth."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        found = [ref.rsplit("/", 1)[1]] if isinstance(ref, str) else []
        return found + [name for value in node.values() for name in _refs(value)]
    if isinstance(node, list):
        return [name for value in node for name in _refs(value)]
    return []
