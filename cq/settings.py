"""A search's settings, resolved once at its front (as ripgrep derives ``HiArgs`` from its
flags once): the profile is parsed once, its tuning tables and its ``[semantic]`` table read
from that one parse, the environment and the request's switches laid on top; no stage reads
the profile again.

The semantic stage's settings: whether it runs, whether a search waits for Pyrefly, and how
long it may ask.

Off with ``--no-semantic`` (``SearchRequest.semantic``), ``CQ_SEMANTIC=0`` or a profile's
``[semantic] enabled = false``.

A search shows the answers cq's cache holds when it looks them up, and no others: the same
cache gives the same report whatever the machine's load. What is missing is ``pending``: a
long-lived cq (``cq mcp``, cq's server) asks Pyrefly for it in the background, within
``budget_ms`` per search (``CQ_SEMANTIC_BUDGET_MS``), and a later search shows it. Only a
user who asks to wait makes a search wait for Pyrefly: ``wait_ms`` (``--semantic-wait MS``,
``CQ_SEMANTIC_WAIT_MS``, ``[semantic] wait_ms``; default 0) of wall time after enrichment,
and the answers that came within it are shown (then, and only then, the report depends on
the clock, as asked). A one-shot search without a wait does not start Pyrefly: a fresh
server answers nothing within the tens of milliseconds an agent would not notice
(``stage.py`` has the figures). Answers are cached (``memo.py``) unless ``[semantic] cache =
false`` or ``CQ_SEMANTIC_CACHE=0``.

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
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from cq.env import env_choice, env_float
from cq.errors import UsageError
from cq.model.tuning import Tuning

if TYPE_CHECKING:
    from cq.model import SearchRequest

# A background batch's limit: as long as a search waits for Pyrefly's workspace index
# (``questions.INDEXING_WAIT_S``; hand-set: saleor, 4,329 files, was indexed and answered 36 s
# after start at load ~25). It delays no report; an answer it cuts is asked again next time.
DEFAULT_BUDGET_MS = 60_000.0


class SemanticSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    enabled: bool = True
    budget_ms: float = DEFAULT_BUDGET_MS  # one background batch, never a report's wait
    wait_ms: float = 0.0  # how long a search waits for Pyrefly's answers (the user's choice)
    cache: bool = True  # answers kept in cq's cache (``memo.py``); off: always asked afresh
    index: Literal["auto", "always", "never"] = "auto"  # Pyrefly's workspace index: see above


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    """What a search reads from its profile and the environment, resolved once."""

    tuning: Tuning
    semantic: SemanticSettings


def resolve_settings(request: SearchRequest, table: dict[str, Any] | None = None) -> Settings:
    """The request's profile parsed once (``table``, when the caller already parsed it for
    the request's limits), then the tables read from it, the environment and the request's
    own switches on top."""
    from cq.profiles import read_profile, section_of, tuning_of

    profile = read_profile(request.profile, request.root) if table is None else table
    semantic = _semantic(request, section_of(profile, request.profile, "semantic"))
    return Settings(tuning=tuning_of(profile, request.profile), semantic=semantic)


def _semantic(request: SearchRequest, table: dict[str, object]) -> SemanticSettings:
    """The profile's ``[semantic]`` table, then the environment, then the request's switch
    and wait."""
    profile = request.profile
    try:
        settings = msgspec.convert(table, SemanticSettings)
    except msgspec.ValidationError as exc:
        raise UsageError(f"invalid profile {profile}: [semantic] {exc}") from None
    enabled = settings.enabled and request.semantic and _switch("CQ_SEMANTIC")
    budget_ms = env_float("CQ_SEMANTIC_BUDGET_MS", settings.budget_ms)  # checked by name
    wait_ms = env_float("CQ_SEMANTIC_WAIT_MS", settings.wait_ms)  # checked by name
    if request.semantic_wait_ms > 0:
        wait_ms = float(request.semantic_wait_ms)
    cache = settings.cache and _switch("CQ_SEMANTIC_CACHE")
    index = env_choice("CQ_SEMANTIC_INDEX") or settings.index  # checked by name
    return SemanticSettings(
        enabled=enabled,
        budget_ms=max(budget_ms, 0.0),
        wait_ms=max(wait_ms, 0.0),
        cache=cache,
        index=index,  # type: ignore[arg-type]  (one of SETTINGS' choices)
    )


def _switch(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("0", "off", "false", "no")
