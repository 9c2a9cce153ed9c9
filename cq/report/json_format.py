"""JSON rendering with msgspec: field order is struct order, so output is stable."""

from __future__ import annotations

import msgspec

from cq.model import SearchResult


def render_json(result: SearchResult) -> str:
    """The whole result as indented JSON text ending in a newline."""
    return msgspec.json.format(msgspec.json.encode(result), indent=2).decode() + "\n"
