"""Whether the semantic stage runs and how long it may take.

Off with ``--no-semantic`` (``SearchRequest.semantic``), ``CQ_SEMANTIC=0`` or a profile's
``[semantic] enabled = false``. The budget is the stage's whole wall time in one search
after enrichment (server start-up overlaps classification and is not in it): ``budget_ms``
in the profile's ``[semantic]`` table, ``CQ_SEMANTIC_BUDGET_MS`` on top. The default 1000 ms
is the issue's ceiling; bench/semantic_cost.py measures what 30 hits really cost.
"""

from __future__ import annotations

import os

import msgspec

from cq.env import env_float
from cq.errors import UsageError

DEFAULT_BUDGET_MS = 1000.0


class SemanticSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    enabled: bool = True
    budget_ms: float = DEFAULT_BUDGET_MS


def semantic_settings(profile: str, root: str, requested: bool) -> SemanticSettings:
    """The profile's ``[semantic]`` table, then the environment, then the request's switch."""
    from cq.profiles import profile_section

    table = profile_section(profile, root, "semantic")
    try:
        settings = msgspec.convert(table, SemanticSettings)
    except msgspec.ValidationError as exc:
        raise UsageError(f"invalid profile {profile}: [semantic] {exc}") from None
    env_switch = os.environ.get("CQ_SEMANTIC", "").strip().lower()
    enabled = settings.enabled and requested and env_switch not in ("0", "off", "false", "no")
    budget_ms = env_float("CQ_SEMANTIC_BUDGET_MS", settings.budget_ms)  # checked by name
    return SemanticSettings(enabled=enabled, budget_ms=max(budget_ms, 0.0))
