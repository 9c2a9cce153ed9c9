"""The ranking table: every weight the score uses, in one struct a profile can override.

Part of ``tuning.Tuning`` (its ``rank`` group). A profile TOML file may carry a ``[rank]``
table with any of these fields, e.g. ``[rank.category]`` ``comment_match = 0.05`` or
``out_of_focus = 0.7``; missing keys keep the defaults below.
"""

from __future__ import annotations

from typing import Annotated, Literal

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


def _why(note: str) -> msgspec.Meta:
    return msgspec.Meta(description=note)


class RankWeights(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Weights and factors of ``score = category x role x confidence x focus x boosts - depth``."""

    category: Annotated[
        dict[str, float], _why("hand-set: the seed's category order (004); report_size.py")
    ] = msgspec.field(default_factory=lambda: dict(DEFAULT_CATEGORY_WEIGHTS))
    role: Annotated[
        dict[str, float], _why("hand-set, lib 0.75 so a vendored copy stays below src")
    ] = msgspec.field(default_factory=lambda: dict(DEFAULT_ROLE_MULTIPLIERS))
    unknown_category: Annotated[float, _why("hand-set: as text_match")] = 0.3
    out_of_focus: Annotated[
        float, _why("hand-set: hits outside the focus are demoted, never hidden")
    ] = 0.5
    depth_penalty: Annotated[
        float, _why("hand-set: subtracted per level of nesting of the containing scope")
    ] = 0.02
    max_depth: Annotated[int, _why("hand-set: nesting beyond this costs nothing more")] = 4
    exact_definition: Annotated[
        float, _why("hand-set: a definition of the queried name comes first (report_size.py)")
    ] = 4.0
    filename_exact: Annotated[
        float, _why("hand-set: the file's stem is the queried name (snake/camel-blind)")
    ] = 1.25
    filename_partial: Annotated[
        float, _why("hand-set: the file's stem contains the queried name")
    ] = 1.1
    name_cut: Annotated[
        float,
        _why(
            "hand-set: a hit starting or ending inside a longer name (-F 'impl Arg' in"
            " 'impl ArgAction') ranks below the same text ending where the name ends"
        ),
    ] = 0.8
    coverage: Annotated[
        float, _why("hand-set: up to +50% for hits in files covering every weighted term")
    ] = 0.5
    evidence: Annotated[
        float, _why("hand-set with bench/localization.py: up to 5x in the best-evidenced file")
    ] = 4.0
    evidence_defines: Annotated[
        float, _why("hand-set: a file defining a pattern's name is stronger evidence")
    ] = 2.0
    evidence_hint: Annotated[
        float, _why("hand-set: a path hint of weight 1 is worth this many average hits")
    ] = 2.0
    dotted_target: Annotated[
        float,
        _why(
            "hand-set: a dotted query's own definition (ABCMeta.register) times exact_definition"
            " leads whatever its role; dotted_rank.py: #1 for 9 of 9 queries, stage off"
        ),
    ] = 3.0
    dotted_other_definition: Annotated[
        float,
        _why(
            "hand-set: another owner's definition of a dotted query's last name (0.5) ranks"
            " below its uses (stdlib ABCMeta.register: 16 other register defs took 16 of 30"
            " shown places at 1.0)"
        ),
    ] = 0.5
    dotted_receiver: Annotated[
        float,
        _why(
            "hand-set: a use whose receiver names the owner (a callsite 0.8 x 3 = 2.4) ranks"
            " above other owners' definitions of the name (1.0) and plain uses"
        ),
    ] = 3.0
    dotted_bare: Annotated[
        float,
        _why(
            "hand-set: a use without a receiver of a dotted query whose owner is named like a"
            " class (saleor BaseMutation.call_event: bare call_event() calls, a module"
            " function, took 27 of 29 shown uses at 1.0; dotted_rank.py)"
        ),
    ] = 0.5


def complete_weights(partial: RankWeights) -> RankWeights:
    """A profile's partial ``[rank]`` table on top of the defaults (dicts merge key by key)."""
    return msgspec.structs.replace(
        partial,
        category={**DEFAULT_CATEGORY_WEIGHTS, **partial.category},
        role={**DEFAULT_ROLE_MULTIPLIERS, **partial.role},
    )
