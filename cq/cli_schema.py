"""``cq schema``: the JSON Schema of ``SearchResult``, generated from the structs themselves."""

from __future__ import annotations

import sys

import msgspec


def print_schema() -> int:
    from cq.model import SearchResult

    schema = msgspec.json.schema(SearchResult)
    sys.stdout.write(msgspec.json.format(msgspec.json.encode(schema), indent=2).decode() + "\n")
    return 0
