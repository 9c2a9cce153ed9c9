"""Whether the semantic stage runs and how long it may take.

Off with ``--no-semantic`` (``SearchRequest.semantic``), ``CQ_SEMANTIC=0`` or a profile's
``[semantic] enabled = false``. The budget is the stage's whole wall time in one search
after enrichment (server start-up overlaps classification and is not in it): ``budget_ms``
in the profile's ``[semantic]`` table, ``CQ_SEMANTIC_BUDGET_MS`` on top. The default 1000 ms
is the issue's ceiling; bench/semantic_cost.py measures what 30 hits really cost. Answers are
cached (``memo.py``) unless ``[semantic] cache = false`` or ``CQ_SEMANTIC_CACHE=0`` (the bench
uses it to time Pyrefly itself).

Pyrefly's workspace index (what reference counts need) is built only by a server that stays
warm (``cq mcp``): ``[semantic] index = "auto"`` (``CQ_SEMANTIC_INDEX``). A one-shot search's
server is stopped a second later, long before it could index a real tree (index-bench, 2,531
files: ~70 s; saleor, 4,329: ~36 s), and its indexing only took CPU from the search; so it
runs ``--indexing-mode none`` and reports types, definitions and errors, no reference counts.
``"always"`` indexes in every search (a small tree indexes within the budget), ``"never"``
in none.
"""

from __future__ import annotations

import os
from typing import Literal

import msgspec

from cq.env import env_choice, env_float
from cq.errors import UsageError

DEFAULT_BUDGET_MS = 1000.0


class SemanticSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    enabled: bool = True
    budget_ms: float = DEFAULT_BUDGET_MS
    cache: bool = True  # answers kept in cq's cache (``memo.py``); off: always asked afresh
    index: Literal["auto", "always", "never"] = "auto"  # Pyrefly's workspace index: see above


def semantic_settings(profile: str, root: str, requested: bool) -> SemanticSettings:
    """The profile's ``[semantic]`` table, then the environment, then the request's switch."""
    from cq.profiles import profile_section

    table = profile_section(profile, root, "semantic")
    try:
        settings = msgspec.convert(table, SemanticSettings)
    except msgspec.ValidationError as exc:
        raise UsageError(f"invalid profile {profile}: [semantic] {exc}") from None
    enabled = settings.enabled and requested and _switch("CQ_SEMANTIC")
    budget_ms = env_float("CQ_SEMANTIC_BUDGET_MS", settings.budget_ms)  # checked by name
    cache = settings.cache and _switch("CQ_SEMANTIC_CACHE")
    index = env_choice("CQ_SEMANTIC_INDEX") or settings.index  # checked by name
    return SemanticSettings(
        enabled=enabled,
        budget_ms=max(budget_ms, 0.0),
        cache=cache,
        index=index,  # type: ignore[arg-type]  (one of SETTINGS' choices)
    )


def _switch(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("0", "off", "false", "no")
