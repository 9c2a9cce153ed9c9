"""The rewrite's LLM settings, from the user's own configuration only; read once at a search's
front by ``cq.settings`` (its ``Settings.llm``), never by the rewrite stage.

The LLM endpoint receives the question, the repository's defined names and, when set,
``CQ_LLM_API_KEY`` as a bearer token, so only the user names it: the user config file
(``[rewrite]`` in ``$XDG_CONFIG_HOME/cq/config.toml``, else ``~/.config/cq/config.toml``:
``enabled``, ``provider``, ``url``, ``model``, ``timeout``) under the ``CQ_LLM_*`` environment
variables. A searched repository is untrusted input (issue 13: its ``.cq.toml`` pointed the
key at a server of its choosing): its ``[rewrite]`` table in ``.cq.toml`` or
``[tool.cq.rewrite]`` in ``pyproject.toml`` may only switch the LLM off for itself
(``enabled = false``); any other key there is ignored. The key is read from the environment
only. Defaults: Ollama at http://localhost:11434, model qwen2.5:3b, 5 s for the whole
exchange.
"""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path
from typing import Any, Literal

import msgspec

from cq.env import env_choice, env_number, env_switch, env_text, user_config_dir
from cq.errors import UsageError
from cq.tables import TableError, convert_table

Provider = Literal["ollama", "openai"]
MAX_TIMEOUT = 120.0  # seconds; a rewrite is worth a few seconds of a search, never minutes
_MAX_REPOSITORY_FILE = 1 << 20  # bytes; a pyproject.toml is a few KB


class LlmConfig(msgspec.Struct, frozen=True, kw_only=True):
    enabled: bool = True
    provider: Provider = "ollama"
    url: str = "http://localhost:11434"
    model: str = "qwen2.5:3b"
    timeout: float = 5.0
    connect_timeout: float = 0.25
    api_key: str | None = None
    # the user named a model server (config file or CQ_LLM_*), rather than cq trying its
    # default: only then is its failure worth a line of the report
    configured: bool = False


class _UserFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``[rewrite]`` of the user config file: every key optional, unknown keys refused."""

    enabled: bool | None = None
    provider: Provider | None = None
    url: str | None = None
    model: str | None = None
    timeout: float | None = None


class _UserConfig(msgspec.Struct, frozen=True):
    rewrite: _UserFile = _UserFile()


# Where a repository's file may hold its ``rewrite`` table, first match wins.
_REPOSITORY_TABLES = (
    (".cq.toml", (("tool", "cq", "rewrite"), ("rewrite",))),
    ("pyproject.toml", (("tool", "cq", "rewrite"),)),
)

# ``CQ_LLM=off`` turns the LLM off on this machine whatever the repository says; ``on``
# turns it on over a repository's ``enabled = false`` (``cq.env.env_switch``'s words).


class LlmEnv(msgspec.Struct, frozen=True, kw_only=True):
    """The ``CQ_LLM*`` variables, read at a search's front (``Settings.llm``)."""

    switch: bool | None = None  # CQ_LLM
    provider: Provider | None = None
    url: str | None = None
    model: str | None = None
    timeout: float | None = None
    api_key: str | None = None


def llm_env() -> LlmEnv:
    """The environment's part of the LLM settings, checked (``cq.env``)."""
    timeout = env_number("CQ_LLM_TIMEOUT")
    return LlmEnv(
        switch=env_switch("CQ_LLM"),
        provider=env_choice("CQ_LLM_PROVIDER"),  # type: ignore[arg-type]  (SETTINGS' choices)
        url=env_text("CQ_LLM_URL"),
        model=env_text("CQ_LLM_MODEL"),
        timeout=float(timeout) if timeout is not None else None,
        api_key=env_text("CQ_LLM_API_KEY"),
    )


def load_config(root: Path, env: LlmEnv) -> LlmConfig:
    """The user's settings (file, then ``env``) and the repository's opt-out. Called only when
    a search asks the model (``cq.settings`` says why the files wait until then)."""
    user = _user_file()
    provider = env.provider or user.provider or "ollama"
    default_url = "http://localhost:11434" if provider == "ollama" else "http://localhost:8000/v1"
    timeout = env.timeout if env.timeout is not None else user.timeout
    if env.switch is not None:
        enabled = env.switch
    else:
        enabled = user.enabled is not False and _repository_allows(root)
    named = (user.enabled, user.provider, user.url, user.model)
    given = (env.url, env.model, env.provider, env.api_key)
    configured = any(v is not None for v in (*named, *given))
    return LlmConfig(
        configured=configured or env.switch is True,
        enabled=enabled,
        provider=provider,
        url=env.url or user.url or default_url,
        model=env.model or user.model or "qwen2.5:3b",
        timeout=timeout if timeout is not None else 5.0,
        api_key=env.api_key,
    )


def user_config_path() -> Path:
    """``$XDG_CONFIG_HOME/cq/config.toml``, else ``~/.config/cq/config.toml``."""
    return user_config_dir() / "config.toml"


def _user_file() -> _UserFile:
    """The user's ``[rewrite]`` table; a file that is there but unusable is a ``UsageError``
    (the user's own mistake, to hear about), a missing one means the defaults."""
    path = user_config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return _UserFile()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the user config {path}: {_reason(exc)}") from None
    try:
        rewrite = convert_table(tomllib.loads(text), _UserConfig, "").rewrite
    except (tomllib.TOMLDecodeError, TableError, RecursionError) as exc:
        raise UsageError(f"invalid user config {path}: {exc}") from None
    if rewrite.timeout is not None and not 0 < rewrite.timeout <= MAX_TIMEOUT:
        raise UsageError(
            f"invalid user config {path}: rewrite.timeout must be in (0, {MAX_TIMEOUT:g}]"
        )
    return rewrite


def _repository_allows(root: Path) -> bool:
    """False when the repository's own config says ``enabled = false``; nothing else there
    is read. Unreadable or invalid files allow (they cannot switch anything on)."""
    for name, tables in _REPOSITORY_TABLES:
        text = _small_regular_file(root / name)
        try:
            data: Any = tomllib.loads(text) if text is not None else None
        except (tomllib.TOMLDecodeError, RecursionError):  # tomllib recurses per level
            continue
        for keys in tables:
            table = data
            for key in keys:
                table = table.get(key) if isinstance(table, dict) else None
            if isinstance(table, dict):
                return bool(table.get("enabled", True))
    return True


def _small_regular_file(path: Path) -> str | None:
    """The text of a regular file of at most ``_MAX_REPOSITORY_FILE`` bytes, else None. Opened
    without blocking and checked before reading: a repository's ``.cq.toml`` may be a FIFO
    (a plain read waited forever) or a link to a device."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_REPOSITORY_FILE:
            return None
        data = handle.read(_MAX_REPOSITORY_FILE + 1)
    try:
        return data.decode("utf-8") if len(data) <= _MAX_REPOSITORY_FILE else None
    except UnicodeDecodeError:
        return None


def _reason(exc: Exception) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
