"""JSON rendering with msgspec: field order is struct order, so output is stable.

Compact (one line, no indentation): the reader is a program or an agent paying per token;
pipe through ``python -m json.tool`` or ``jq`` to read it.
"""

from __future__ import annotations

import msgspec

from cq.model import SearchResult


def render_json(result: SearchResult) -> str:
    """The whole result as compact JSON text ending in a newline. A file name that is not
    UTF-8 (its undecodable bytes read as lone surrogates, which msgspec will not write) is
    written as JSON's ``\\udcXX`` escapes, which read back as the same name. The report's
    ``plan`` (what the markdown says) is left out: the JSON carries the facts it is made of."""
    result = msgspec.structs.replace(result, plan=msgspec.UNSET)
    try:
        return msgspec.json.encode(result).decode() + "\n"
    except UnicodeEncodeError:
        import json

        return json.dumps(msgspec.to_builtins(result), separators=(",", ":")) + "\n"
