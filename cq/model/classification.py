"""What a hit *is*: the classifier's verdict for one ``RawMatch``."""

from __future__ import annotations

from typing import Literal

import msgspec

Category = Literal[
    "definition",
    "callsite",
    "import",
    "from_import",
    "assignment",
    "reference",
    "annotation",
    "docstring_match",
    "comment_match",
    "string_match",
    "text_match",
]
# index: a definition line the index's scanner placed (no rg hit on it; README "Tiers")
Tier = Literal["heuristic", "node", "records", "fallback", "index"]


class SymbolFlags(msgspec.Struct, frozen=True, omit_defaults=True):
    """Python ``symtable`` binding flags of the matched name in its innermost scope."""

    imported: bool = False
    assigned: bool = False
    referenced: bool = False
    parameter: bool = False
    global_: bool = msgspec.field(default=False, name="global")
    local: bool = False
    free: bool = False
    nonlocal_: bool = msgspec.field(default=False, name="nonlocal")


class Classification(msgspec.Struct, frozen=True, kw_only=True):
    """The category of one hit, how sure we are, and which tier decided."""

    category: Category = "text_match"
    confidence: float = 0.5
    tier: Tier = "fallback"
    node_kind: str | None = None
    containing_scope: str | None = None  # "Outer.Inner.method", "impl Type::method", "mod::fn"
    symtable: SymbolFlags | None = None
    reason: str | None = None  # why a hit stayed text_match (syntax error, non-UTF-8, ...)
