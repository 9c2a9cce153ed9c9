"""cq's environment settings that hold a number or a choice, read and checked in one place.

``SETTINGS`` lists each such ``CQ_*`` variable with its kind and range. ``check_environment``
(run by ``cq search`` and ``cq mcp`` before any work) reports the first bad one as a
``UsageError`` naming it, so a typo is one ``cq: CQ_MAX_WORKERS ...`` line and exit 2, not an
internal error halfway through a search. The readers (``env_int``, ``env_float``,
``env_choice``) raise the same error, so a search run from Python reports it too. An unset or
empty variable means the reader's default. ``SWITCHES`` and ``TEXTS`` list the variables that
hold a yes/no or free text (a URL, a model, a program), read by ``env_switch`` and
``env_text``. ``user_config_dir`` is where the user's own files live. ``ENVIRONMENT`` says
in one line what each variable cq reads does: ``docs/reference.md`` is generated from it
(``python -m tools.gen_reference``), and ``tests/test_reference.py`` fails when a ``CQ_*``
name in ``cq/`` is missing from it.

Only ``cq.settings`` (a search's settings, built once at its front) and the front ends and
process-wide places that ``cq.settings`` names call these readers: no stage reads the
environment (``tests/test_settings_front.py`` checks). Imports nothing of cq but ``errors``.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Literal

import msgspec

from cq.errors import UsageError


class _Number(msgspec.Struct, frozen=True):
    kind: Literal["int", "float"]
    low: float  # inclusive
    high: float | None = None  # inclusive
    positive: bool = False  # low itself excluded


SETTINGS: dict[str, _Number | tuple[str, ...]] = {
    "CQ_EMBED": ("on", "off"),  # the optional dense signal (cq/embed), over [embed] enabled
    "CQ_ENRICH_BUDGET_MS": _Number("float", 0),
    "CQ_ENRICH_LIBCST_HITS": _Number("int", 0),
    "CQ_ENRICH_MAX_BYTES": _Number("int", 0),
    "CQ_INDEX_AUTO_BYTES": _Number("int", 0),
    "CQ_LLM_PROVIDER": ("ollama", "openai"),
    "CQ_LLM_TIMEOUT": _Number("float", 0, 120, positive=True),
    "CQ_MAX_WORKERS": _Number("int", 0),
    # cq mcp's answer budget; the floor is cq.agent.budget.MIN_SERVER_BUDGET, which reads it here
    "CQ_MCP_MAX_TOKENS": _Number("int", 2000),
    "CQ_POOL_MIN_BYTES": _Number("int", 0),
    "CQ_SEMANTIC_BUDGET_MS": _Number("float", 0),
    "CQ_SEMANTIC_WAIT_MS": _Number("float", 0),
    "CQ_SEMANTIC_INDEX": ("auto", "always", "never"),
    "CQ_SERVER_IDLE_S": _Number("float", 0, positive=True),
    "CQ_SERVER_PROCESS_MAX_MB": _Number("int", 0, positive=True),
    "CQ_STANDBY": ("auto", "on", "off"),  # read by cq.cli.dispatch before this module loads
}


# Yes/no variables: "0", "off", "false", "no" say no; "1", "on", "true", "yes" say yes (any case);
# anything else (or unset) leaves the reader's default.
SWITCHES = ("CQ_LLM", "CQ_PY_ENRICHMENT_CROSSCHECK", "CQ_SEMANTIC", "CQ_SEMANTIC_CACHE")
TEXTS = ("CQ_LLM_API_KEY", "CQ_LLM_MODEL", "CQ_LLM_URL", "CQ_PYREFLY", "VIRTUAL_ENV")
# What each variable does, for the reference; every CQ_* name cq reads is here.
ENVIRONMENT: dict[str, str] = {
    "CQ_ROOT": "default --root",
    "CQ_FORMAT": "default --format: md or json",
    "CQ_RG": "the rg binary (else the rg beside the Python interpreter, else PATH's)",
    "CQ_PYREFLY": "the pyrefly binary (else the one beside the Python interpreter, else PATH's)",
    "CQ_CACHE_DIR": "cache directory (else $XDG_CACHE_HOME/cq, else ~/.cache/cq)",
    "CQ_CACHE_MAX_MB": "bound of the cache dir in MB (default 512): half for the database, half "
    "for repository indexes, embedding vectors and Pyrefly's scratch; a bad value is named in "
    "one warning and the default used",
    "CQ_ENRICH_LIBCST_HITS": "at most this many shown findings get the LibCST stage (default 40)",
    "CQ_ENRICH_BUDGET_MS": "a wall-time deadline for enriching the shown findings (default none; "
    "setting it makes the report depend on the machine's speed)",
    "CQ_ENRICH_MAX_BYTES": "payload budget per enriched finding, as compact JSON (default 4096)",
    "CQ_PY_ENRICHMENT_CROSSCHECK": "yes marks a finding degraded when ast-grep, LibCST and "
    "tree-sitter disagree",
    "CQ_SEMANTIC": "no turns the Pyrefly stage off (as --no-semantic)",
    "CQ_STANDBY": "auto (default): a search run in-process forks, when a core is idle, a "
    "child that imports LibCST while it classifies and computes the shown findings' "
    "enrichment (its imports at a lower priority, given up when starved of a core); on: "
    "whether or not a core is idle, at the search's priority, waited for; off: never",
    "CQ_SEMANTIC_BUDGET_MS": "how long a long-lived cq may ask Pyrefly for one search's pending "
    "answers in the background (default 60000); it delays no report",
    "CQ_SEMANTIC_WAIT_MS": "as --semantic-wait MS for every search (default 0: never wait)",
    "CQ_SEMANTIC_CACHE": "no asks Pyrefly afresh instead of using cached answers",
    "CQ_SEMANTIC_INDEX": "whether Pyrefly indexes the root for reference counts (auto: only in "
    "cq mcp)",
    "CQ_MAX_WORKERS": "most classification worker processes (default 4, at most the CPU count)",
    "CQ_POOL_MIN_BYTES": "uncached source bytes from which classification uses worker "
    "processes (default 3 MiB)",
    "CQ_INDEX_AUTO_BYTES": "new source bytes up to which a search builds the repository index "
    "itself (default 128 MiB; beyond, cq index does)",
    "CQ_LLM": "no: never ask an LLM to rewrite a question; yes: ask even where a repository "
    "opts out",
    "CQ_LLM_URL": "the rewrite model's server (over the user config's [rewrite] url)",
    "CQ_LLM_MODEL": "the rewrite model's name",
    "CQ_LLM_PROVIDER": "the rewrite server's protocol",
    "CQ_LLM_TIMEOUT": "seconds for the whole exchange with the rewrite model (default 5)",
    "CQ_LLM_API_KEY": "sent to the rewrite server as a bearer token; read from the "
    "environment only",
    "CQ_MCP_MAX_TOKENS": "cq mcp's token budget per answer when --max-tokens is not given "
    "(default 8000)",
    "CQ_SERVER": "0: never send a search to the background server nor start one",
    "CQ_SERVER_IDLE_S": "seconds without a search after which the background server exits "
    "(default 900)",
    "CQ_SERVER_PROCESS_MAX_MB": "a search process of cq server or cq mcp resident past this "
    "many MB after a search is replaced by a fresh one (default 450)",
    "CQ_EMBED": "on fuses the optional dense signal into questions, off never (over the "
    "profile's [embed] enabled)",
    "CQ_DEBUG": "1 shows a traceback for an internal error instead of the one-line message",
    "XDG_CONFIG_HOME": "the user config ($XDG_CONFIG_HOME/cq/config.toml, profiles/NAME.toml; "
    "else ~/.config/cq)",
    "XDG_CACHE_HOME": "the cache's parent when CQ_CACHE_DIR is unset (else ~/.cache)",
    "XDG_RUNTIME_DIR": "where the background server's socket lives ($XDG_RUNTIME_DIR/cq, else "
    "cq-<uid> in the temp dir)",
    "NO_COLOR": "set to anything but the empty string: no colour with --color auto",
    "CODEX_HOME": "where cq agent install writes Codex's user files (default ~/.codex)",
    "VIRTUAL_ENV": "the virtualenv whose site-packages the unique-name reading checks",
}


def kind_of(name: str) -> str:
    """A variable's kind in words: its range, its choices, yes/no, or text."""
    spec = SETTINGS.get(name)
    if isinstance(spec, _Number):
        return _describe(spec)
    if spec is not None:
        return "one of " + ", ".join(spec)
    return "yes/no" if name in SWITCHES else "text"


_NO = ("0", "off", "false", "no")
_YES = ("1", "on", "true", "yes")


def user_config_dir() -> Path:
    """cq's user config dir: ``$XDG_CONFIG_HOME/cq``, else ``~/.config/cq`` (``config.toml``,
    ``profiles/NAME.toml``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "cq"


def check_environment() -> None:
    """Raise ``UsageError`` for the first (by name) setting whose value is unusable."""
    for name, spec in SETTINGS.items():
        text = os.environ.get(name, "")
        if not text:
            continue
        if isinstance(spec, _Number):
            _number(name, spec, text)
        else:
            _choice(name, spec, text)


def env_int(name: str, default: int) -> int:
    text = os.environ.get(name, "")
    return int(_number(name, _spec(name), text)) if text else default


def env_float(name: str, default: float) -> float:
    text = os.environ.get(name, "")
    return float(_number(name, _spec(name), text)) if text else default


def env_number(name: str) -> float | None:
    """A numeric setting's value (an ``int`` for a whole-number one), None when unset."""
    text = os.environ.get(name, "")
    return _number(name, _spec(name), text) if text else None


def env_choice(name: str) -> str | None:
    text = os.environ.get(name, "")
    choices = SETTINGS[name]
    assert isinstance(choices, tuple)
    return _choice(name, choices, text) if text else None


def env_switch(name: str) -> bool | None:
    """A yes/no variable's word: True, False, or None when unset or neither."""
    assert name in SWITCHES
    text = os.environ.get(name, "").strip().lower()
    return True if text in _YES else False if text in _NO else None


def env_text(name: str) -> str | None:
    """A free-text variable's value, None when unset or empty."""
    assert name in TEXTS
    return os.environ.get(name) or None


def env_minimum(name: str) -> int:
    """The least value a numeric setting accepts (so a flag setting the same value can share it)."""
    return int(_spec(name).low)


def _spec(name: str) -> _Number:
    spec = SETTINGS[name]
    assert isinstance(spec, _Number)
    return spec


def _number(name: str, spec: _Number, text: str) -> float:
    try:
        value = int(text) if spec.kind == "int" else float(text)
    except ValueError:
        value = math.nan
    ok = value == value and value >= spec.low and (spec.high is None or value <= spec.high)
    if not ok or (spec.positive and value == spec.low) or value in (math.inf, -math.inf):
        raise UsageError(f"{name} must be {_describe(spec)}: {_shown(text)}")
    return value


def _describe(spec: _Number) -> str:
    what = "a whole number" if spec.kind == "int" else "a number"
    low = f"{spec.low:g}"
    if spec.high is not None:
        return f"{what} in {'(' if spec.positive else '['}{low}, {spec.high:g}]"
    return f"{what} {'>' if spec.positive else '>='} {low}"


def _choice(name: str, choices: tuple[str, ...], text: str) -> str:
    if text not in choices:
        raise UsageError(f"{name} must be one of {', '.join(choices)}: {_shown(text)}")
    return text


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "...")
