"""What a hit *is*: the classifier's verdict for one ``RawMatch``."""

from __future__ import annotations

from typing import Literal, get_args

import msgspec

# In the order reports count them (code first, then text, then the non-code kinds).
Category = Literal[
    "definition",
    "callsite",
    "import",
    "from_import",
    "assignment",
    "reference",
    "annotation",
    "text_match",
    "docstring_match",
    "comment_match",
    "string_match",
]
CATEGORY_ORDER: tuple[Category, ...] = get_args(Category)
# What a name's use in code can be; the rest are text matches.
CODE_CATEGORIES: frozenset[Category] = frozenset(
    CATEGORY_ORDER[: CATEGORY_ORDER.index("text_match")]
)
# Text in a docstring, a comment or a string literal.
NON_CODE_CATEGORIES: tuple[Category, ...] = CATEGORY_ORDER[CATEGORY_ORDER.index("text_match") + 1 :]
# index: a definition line the index's scanner placed (no rg hit on it; CONTRIBUTING.md)
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
