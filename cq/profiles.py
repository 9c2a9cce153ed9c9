"""Search-limit presets: TOML files shipped in the wheel (``cq/_profiles``) or by path."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import msgspec

from cq.errors import UsageError
from cq.model import Limits, RankWeights, complete_weights

_T = TypeVar("_T")

_PACKAGED = Path(__file__).parent / "_profiles"
_SOURCE_TREE = Path(__file__).parent.parent / "profiles"


def profiles_dir() -> Path:
    """The wheel's copy when installed, the repository's ``profiles/`` in a checkout."""
    return _PACKAGED if _PACKAGED.is_dir() else _SOURCE_TREE


def available_profiles() -> list[str]:
    return sorted(p.stem for p in profiles_dir().glob("*.toml"))


def load_profile(name_or_path: str) -> Limits:
    """Limits from a named preset or from a TOML file path; a clear error otherwise."""
    table = _profile_table(name_or_path)
    table.pop("rank", None)
    return _convert(table, Limits, name_or_path)


def load_rank_weights(name_or_path: str) -> RankWeights:
    """The ranking table: defaults, with the profile's optional ``[rank]`` table on top."""
    table = _profile_table(name_or_path).get("rank", {})
    return complete_weights(_convert(table, RankWeights, name_or_path))


def _profile_table(name_or_path: str) -> dict[str, Any]:
    path = Path(name_or_path)
    if not (name_or_path.endswith(".toml") or path.is_file()):
        path = profiles_dir() / f"{name_or_path}.toml"
        if not path.is_file():
            names = ", ".join(available_profiles())
            raise UsageError(f"unknown profile {name_or_path!r} (available: {names})")
    try:
        table = msgspec.toml.decode(path.read_bytes())
    except FileNotFoundError:
        raise UsageError(f"profile file not found: {name_or_path}") from None
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise UsageError(f"invalid profile {name_or_path}: {exc}") from None
    if not isinstance(table, dict):
        raise UsageError(f"invalid profile {name_or_path}: not a table")
    return table


def _convert(table: object, kind: type[_T], name_or_path: str) -> _T:
    try:
        return msgspec.convert(table, kind)
    except msgspec.ValidationError as exc:
        raise UsageError(f"invalid profile {name_or_path}: {exc}") from None
