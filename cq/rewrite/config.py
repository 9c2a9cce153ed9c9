"""LLM settings: ``[tool.cq.rewrite]`` in the searched repo's pyproject.toml or ``.cq.toml``
(``[rewrite]`` there too), overridden by ``CQ_LLM_*`` environment variables.

Defaults: Ollama at http://localhost:11434, model qwen2.5:3b, 5 s timeout. The API key is
read from the environment only, never from a file inside the repository.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

import msgspec

Provider = Literal["ollama", "openai"]


class LlmConfig(msgspec.Struct, frozen=True, kw_only=True):
    enabled: bool = True
    provider: Provider = "ollama"
    url: str = "http://localhost:11434"
    model: str = "qwen2.5:3b"
    timeout: float = 5.0
    connect_timeout: float = 0.25
    api_key: str | None = None


# ``CQ_LLM=off`` turns the LLM off on this machine whatever the repository says; ``on``
# turns it on over a repository's ``enabled = false``.
_SWITCH = {
    "off": False,
    "0": False,
    "false": False,
    "no": False,
    "on": True,
    "1": True,
    "true": True,
}


def load_config(root: Path) -> LlmConfig:
    """File settings under env overrides; unreadable or invalid settings mean the defaults."""
    table = _file_table(root)
    env = os.environ
    provider = env.get("CQ_LLM_PROVIDER") or table.get("provider") or "ollama"
    if provider not in ("ollama", "openai"):
        provider = "ollama"
    url = env.get("CQ_LLM_URL") or table.get("url")
    default_url = "http://localhost:11434" if provider == "ollama" else "http://localhost:8000/v1"
    switch = env.get("CQ_LLM", "").strip().lower()
    enabled = bool(table.get("enabled", True)) if switch not in _SWITCH else _SWITCH[switch]
    return LlmConfig(
        enabled=enabled,
        provider=provider,  # type: ignore[arg-type]
        url=str(url or default_url),
        model=str(env.get("CQ_LLM_MODEL") or table.get("model") or "qwen2.5:3b"),
        timeout=_seconds(env.get("CQ_LLM_TIMEOUT") or table.get("timeout"), 5.0),
        api_key=env.get("CQ_LLM_API_KEY") or None,
    )


def _file_table(root: Path) -> dict[str, Any]:
    for name, path in ((".cq.toml", ("rewrite",)), ("pyproject.toml", ("tool", "cq", "rewrite"))):
        try:
            data: Any = tomllib.loads((root / name).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        if name == ".cq.toml" and isinstance(data.get("tool"), dict):
            data = {"rewrite": data["tool"].get("cq", {}).get("rewrite", data.get("rewrite"))}
        for key in path:
            data = data.get(key) if isinstance(data, dict) else None
        if isinstance(data, dict):
            return data
    return {}


def _seconds(value: object, default: float) -> float:
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default
    return seconds if 0 < seconds <= 120 else default
