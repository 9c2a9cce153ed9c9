"""Payload byte budget per enriched hit, enforced by priority, never by truncating text.

The size is that of the hit's ``Enrichment`` as msgspec JSON. While it is over the budget the
least useful part still present is removed whole and its name added to ``dropped_fields``:
first parser internals (ancestor kinds, parse quality), then long lists
(bindings, decorators, attributes, alias chain, import names, qualified names), then the
agreement and stage reports, then whole facts, signature last. ``status``, ``construct``,
``class_context``, ``degrade_reasons`` and ``dropped_fields`` are never dropped.
"""

from __future__ import annotations

import msgspec

from cq.model import Enrichment

# Least useful first; "a.b" drops field b of the nested struct a.
DROP_ORDER = (
    "structural_context",
    "parse_quality",
    "resolution.bindings",
    "decorators",
    "rust.attributes",
    "resolution.import_alias_chain",
    "import.names",
    "resolution.qualified_names",
    "agreement",
    "stages",
    "function",
    "rust",
    "import",
    "resolution",
    "call",
    "scope_chain",
    "signature",
)
_ATTR = {"import": "import_"}


def payload_size(enrichment: Enrichment) -> int:
    return len(msgspec.json.encode(enrichment))


def enforce_budget(enrichment: Enrichment, max_bytes: int) -> Enrichment:
    """``enrichment`` itself if it fits, else a copy without its least useful parts."""
    dropped: list[str] = []
    for path in DROP_ORDER:
        if payload_size(enrichment) <= max_bytes:
            break
        lighter = _without(enrichment, path)
        if lighter is not None:
            dropped.append(path)
            enrichment = msgspec.structs.replace(lighter, dropped_fields=tuple(dropped))
    return enrichment


def _without(enrichment: Enrichment, path: str) -> Enrichment | None:
    """A copy with ``path`` reset to its default, or None when it is already empty."""
    head, _, tail = path.partition(".")
    attr = _ATTR.get(head, head)
    value = getattr(enrichment, attr)
    if not tail:
        empty = _default(Enrichment, attr)
        return None if value == empty else msgspec.structs.replace(enrichment, **{attr: empty})
    if value is None:
        return None
    inner = getattr(value, tail)
    empty = _default(type(value), tail)
    if inner == empty:
        return None
    return msgspec.structs.replace(
        enrichment, **{attr: msgspec.structs.replace(value, **{tail: empty})}
    )


def _default(struct: type, attr: str) -> object:
    for field in msgspec.structs.fields(struct):
        if field.name == attr:
            return field.default
    raise KeyError(attr)
