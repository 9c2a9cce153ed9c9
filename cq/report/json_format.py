"""JSON rendering with msgspec: field order is struct order, so output is stable.

Compact (one line, no indentation): the reader is a program or an agent paying per token;
pipe through ``python -m json.tool`` or ``jq`` to read it.
"""

from __future__ import annotations

import msgspec

from cq.model import SearchResult


def render_json(result: SearchResult) -> str:
    """The whole result as compact JSON text ending in a newline."""
    return msgspec.json.encode(result).decode() + "\n"
