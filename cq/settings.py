"""A search's settings, resolved once at its front (as ripgrep derives ``HiArgs`` from its
flags once): ``settle`` confines the request's paths (its root resolved to its real path,
once, before anything reads against it, the profile included), parses the profile once
against that root, and builds one frozen ``Settings`` from the profile's tables, the
environment (``cq.env``, which knows each ``CQ_*`` variable's kind and range), the user's
config file (``cq.llm_settings``) and the request's switches. The pipeline hands each stage
its part; no stage reads an environment variable, a profile or a config file.

The limits are settled here too (the profile's, a front end's flags on top) but travel in
the request (``SearchRequest.limits``, rg's caps in ``cq.candidates.limits``): a library
caller sets them on its own request, and the pipeline widens them for a question.

Left outside on purpose (``tests/test_settings_front.py`` lists them):
- the front ends (``cli*.py``, ``agent/``, ``server/``): ``CQ_ROOT``, ``CQ_FORMAT``, colour and
  debug switches, the MCP answer budget, the server's own switches and process settings
  (idle time, socket dir, the environment a warm worker runs a search in) are how the
  request is made or the answer printed, not how it is searched; they read them before
  ``settle``. ``cq index`` is no search: it resolves its root once and reads its profile's
  ``[index]`` table itself;
- where cq's cache and rg live (``cq/cache/place.py``, ``cq/tools.py``): process-wide, used
  outside any search (``cq cache``, ``cq index``, ``cq agent``), and a search's payload keys
  never depend on them;
- rg's child environment (``cq.tools.rg_env``): the child inherits cq's environment with rg's
  own config switched off, which is a property of the process, not a setting;
- the files of the rewrite's LLM settings (the user's ``config.toml``, the repository's
  ``.cq.toml`` / ``pyproject.toml`` opt-out): read by ``cq.llm_settings.load_config`` only
  when a search asks the model, over the ``CQ_LLM*`` values read here. A name search never
  needs them, so it neither opens files of the root it does not search (each file a search
  reads is read once, and only when needed) nor fails on a user config it would not use;
- the environment Pyrefly's process is started with (``cq/semantic/view.py``: cq's own, less
  the variables that would point it at another interpreter), a child's as rg's is.

The semantic stage's settings: whether it runs, whether a search waits for Pyrefly, and how
long it may ask.

Off with ``--no-semantic`` (``SearchRequest.semantic``), ``CQ_SEMANTIC=0`` or a profile's
``[semantic] enabled = false``.

A search shows the answers cq's cache holds when it looks them up, and no others: the same
cache gives the same report whatever the machine's load. What is missing is ``pending``: a
long-lived cq (``cq mcp``, cq's server) asks Pyrefly for it in the background, within
``budget_ms`` per search (``CQ_SEMANTIC_BUDGET_MS``), and a later search shows it. A search
whose order depends on the answers (a callers question, a dotted name) waits for them, up to
``order_wait_ms``, so that its first run orders as a later one does. Otherwise only a
user who asks to wait makes a search wait for Pyrefly: ``wait_ms`` (``--semantic-wait MS``,
``CQ_SEMANTIC_WAIT_MS``, ``[semantic] wait_ms``; default 0) of wall time after enrichment,
and the answers that came within it are shown (then, and only then, the report depends on
the clock, as asked). A one-shot search without a wait does not start Pyrefly: a fresh
server answers nothing within the tens of milliseconds an agent would not notice
(``stage.py`` has the figures). Answers are cached (``memo.py``) unless ``[semantic] cache =
false`` or ``CQ_SEMANTIC_CACHE=0``.

Pyrefly's workspace index (what reference counts need) is built only by a server that stays
warm (``cq mcp``): ``[semantic] index = "auto"`` (``CQ_SEMANTIC_INDEX``). A one-shot search's
server is stopped a second later, long before it could index a real tree (tens of seconds:
bench/results/2026-11-29-figures-from-cq.md), and its indexing only took CPU from the
search; so it
runs ``--indexing-mode none`` and reports types, definitions and errors, no reference counts.
``"always"`` indexes in every search (a small tree indexes within the budget), ``"never"``
in none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from cq.env import env_choice, env_float, env_switch, env_text
from cq.llm_settings import LlmEnv, llm_env
from cq.model import Echo, LadderSettings, Scope, SearchRequest
from cq.model.tuning import Tuning

# A background batch's limit: as long as a search waits for Pyrefly's workspace index
# (``questions.INDEXING_WAIT_S``; hand-set: saleor, 4,329 files, was indexed and answered 36 s
# after start at load ~25). It delays no report; an answer it cuts is asked again next time.
DEFAULT_BUDGET_MS = 60_000.0


class _SemanticTable(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A profile's ``[semantic]`` table: what a profile may set (not which program runs)."""

    enabled: bool = True
    budget_ms: float = DEFAULT_BUDGET_MS  # one background batch, never a report's wait
    wait_ms: float = 0.0  # how long a search waits for Pyrefly's answers (the user's choice)
    # how long a search whose order and Answer depend on Pyrefly's answers (a callers
    # question, a dotted name) waits for the shown hits' answers, so that its first run
    # orders as later ones do. Hand-set, measured with bench/stability.py on moto at load
    # 24-28 on 2 cores (three callers questions, through cq's server): every answer came
    # within it except on the very first question, whose Pyrefly started cold (that answer
    # said provisional); a longer wait would delay every report whose server is stuck.
    order_wait_ms: float = 8000.0
    cache: bool = True  # answers kept in cq's cache (``memo.py``); off: always asked afresh
    index: Literal["auto", "always", "never"] = "auto"  # Pyrefly's workspace index: see above


class SemanticSettings(_SemanticTable, frozen=True, kw_only=True):
    # ``CQ_PYREFLY``: the Pyrefly program to run, from the environment only (a profile may
    # lie inside the searched tree, which must not choose what cq executes)
    pyrefly: str | None = None
    # ``VIRTUAL_ENV``: the user's active virtualenv, whose packages are not the root's names
    venv: str | None = None


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    """Everything a search reads from its profile, the environment and the user's config,
    and the parts of its request each stage takes instead of the request."""

    scope: Scope  # which files it reads: the root's real path, confined once (``cq.confine``)
    ladder: LadderSettings  # the focus, rewrite and index switches (``cq.ladder``)
    echo: Echo  # what the report repeats: summary, follow-ups, token budget (``cq.assemble``)
    tuning: Tuning
    semantic: SemanticSettings
    llm: LlmEnv  # the rewrite's model endpoint as the environment names it (``cq.llm_settings``)
    crosscheck: bool = False  # ``CQ_PY_ENRICHMENT_CROSSCHECK``: a conflict degrades the hit


def settle(
    request: SearchRequest, limits: Mapping[str, Any] | None = None
) -> tuple[SearchRequest, Settings]:
    """The front of a search: the request confined (its root resolved once), its profile
    parsed once against that root, and its ``Settings``. With ``limits`` (a front end's
    limit flags, possibly none) the request's limits become the profile's with those on top;
    without (a library caller's own request), the request's limits stand. ``run_search``
    takes the request and the settings returned together."""
    from cq.confine import confine_request
    from cq.profiles import limits_of, read_profile

    request = confine_request(request)
    profile = read_profile(request.profile, request.root)
    if limits is not None:
        merged = msgspec.structs.replace(limits_of(profile, request.profile), **limits)
        request = msgspec.structs.replace(request, limits=merged)
    return request, _settings(request, profile)


def _settings(request: SearchRequest, profile: dict[str, Any]) -> Settings:
    from cq.profiles import section_as, tuning_of

    semantic = section_as(profile, _SemanticTable, request.profile, "semantic")
    return Settings(
        scope=Scope.of(request),
        ladder=LadderSettings.of(request),
        echo=Echo.of(request),
        tuning=tuning_of(profile, request.profile),
        semantic=_semantic(request, semantic),
        llm=llm_env(),
        crosscheck=env_switch("CQ_PY_ENRICHMENT_CROSSCHECK") is True,
    )


def _semantic(request: SearchRequest, settings: _SemanticTable) -> SemanticSettings:
    """The profile's ``[semantic]`` table (checked), then the environment, then the
    request's switch and wait."""
    enabled = settings.enabled and request.semantic and env_switch("CQ_SEMANTIC") is not False
    budget_ms = env_float("CQ_SEMANTIC_BUDGET_MS", settings.budget_ms)  # checked by name
    wait_ms = env_float("CQ_SEMANTIC_WAIT_MS", settings.wait_ms)  # checked by name
    if request.semantic_wait_ms > 0:
        wait_ms = float(request.semantic_wait_ms)
    cache = settings.cache and env_switch("CQ_SEMANTIC_CACHE") is not False
    index = env_choice("CQ_SEMANTIC_INDEX") or settings.index  # checked by name
    return SemanticSettings(
        enabled=enabled,
        budget_ms=_waitable(budget_ms),
        wait_ms=_waitable(wait_ms),
        order_wait_ms=_waitable(settings.order_wait_ms),
        cache=cache,
        index=index,  # type: ignore[arg-type]  (one of SETTINGS' choices)
        pyrefly=env_text("CQ_PYREFLY"),
        venv=env_text("VIRTUAL_ENV"),
    )


def _waitable(ms: float) -> float:
    """``ms`` within what a thread can wait (``threading.TIMEOUT_MAX``, ~292 years): a longer
    wait is the same wait to a user, but a timer given it raises ``OverflowError``."""
    import threading

    return min(max(ms, 0.0), threading.TIMEOUT_MAX * 1000.0)
