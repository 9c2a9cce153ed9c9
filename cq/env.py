"""cq's environment settings that hold a number or a choice, read and checked in one place.

``SETTINGS`` lists each such ``CQ_*`` variable with its kind and range. ``check_environment``
(run by ``cq search`` and ``cq mcp`` before any work) reports the first bad one as a
``UsageError`` naming it, so a typo is one ``cq: CQ_MAX_WORKERS ...`` line and exit 2, not an
internal error halfway through a search. The readers (``env_int``, ``env_float``,
``env_choice``) raise the same error, so a search run from Python reports it too. An unset or
empty variable means the reader's default. ``SWITCHES`` and ``TEXTS`` list the variables that
hold a yes/no or free text (a URL, a model, a program), read by ``env_switch`` and
``env_text``. ``user_config_dir`` is where the user's own files live.

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
}


# Yes/no variables: "0", "off", "false", "no" say no; "1", "on", "true", "yes" say yes (any case);
# anything else (or unset) leaves the reader's default.
SWITCHES = ("CQ_LLM", "CQ_PY_ENRICHMENT_CROSSCHECK", "CQ_SEMANTIC", "CQ_SEMANTIC_CACHE")
TEXTS = ("CQ_LLM_API_KEY", "CQ_LLM_MODEL", "CQ_LLM_URL", "CQ_PYREFLY", "VIRTUAL_ENV")
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
