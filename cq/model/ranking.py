"""The ranking table: every weight the score uses, in one struct a profile can override.

A profile TOML file may carry a ``[rank]`` table with any of these fields, e.g.
``[rank.category]`` ``comment_match = 0.05`` or ``out_of_focus = 0.7``; missing keys keep the
defaults below.
"""

from __future__ import annotations

from typing import Literal

import msgspec

Role = Literal["src", "test", "doc", "lib"]

DEFAULT_CATEGORY_WEIGHTS: dict[str, float] = {
    "definition": 1.0,
    "callsite": 0.8,
    "import": 0.7,
    "from_import": 0.7,
    "assignment": 0.6,
    "reference": 0.5,
    "annotation": 0.4,
    "text_match": 0.3,
    "docstring_match": 0.2,
    "comment_match": 0.1,
    "string_match": 0.1,
}
# lib is 0.75, not the seed's 0.9: a vendored copy named after the query (site-packages'
# setuptools/command/register.py) must not overtake the project's own definitions on the
# strength of the filename boost (0.9 x 1.25 > 1.0).
DEFAULT_ROLE_MULTIPLIERS: dict[str, float] = {"src": 1.0, "lib": 0.75, "test": 0.5, "doc": 0.3}


class RankWeights(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Weights and factors of ``score = category x role x confidence x focus x boosts - depth``."""

    category: dict[str, float] = msgspec.field(
        default_factory=lambda: dict(DEFAULT_CATEGORY_WEIGHTS)
    )
    role: dict[str, float] = msgspec.field(default_factory=lambda: dict(DEFAULT_ROLE_MULTIPLIERS))
    unknown_category: float = 0.3
    out_of_focus: float = 0.5  # multiplier for hits outside the focus (demoted, never hidden)
    depth_penalty: float = 0.02  # subtracted per level of nesting of the containing scope
    max_depth: int = 4  # nesting beyond this costs nothing more
    exact_definition: float = 4.0  # a definition of the queried name itself
    filename_exact: float = 1.25  # the file's stem is the queried name (snake/camel-blind)
    filename_partial: float = 1.1  # the file's stem contains the queried name
    coverage: float = 0.5  # up to +50% for hits in files that cover every weighted term
    evidence: float = 4.0  # rewritten queries: up to 5x for hits in the best-evidenced file


def complete_weights(partial: RankWeights) -> RankWeights:
    """A profile's partial ``[rank]`` table on top of the defaults (dicts merge key by key)."""
    return msgspec.structs.replace(
        partial,
        category={**DEFAULT_CATEGORY_WEIGHTS, **partial.category},
        role={**DEFAULT_ROLE_MULTIPLIERS, **partial.role},
    )
