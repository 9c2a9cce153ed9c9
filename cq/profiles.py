"""Search-limit presets: TOML files shipped in the wheel (``cq/_profiles``), or a TOML file
inside the searched root (``cq.confine.read_profile_file``: a profile path is a path the request
names, so it obeys the same confinement as ``--in``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import msgspec

from cq.confine import read_profile_file
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


def load_profile(name_or_path: str, root: str) -> Limits:
    """Limits from a named preset or from a TOML file inside ``root`` (a relative path is
    relative to it); a clear error otherwise."""
    table = _profile_table(name_or_path, root)
    table.pop("rank", None)
    return _convert(table, Limits, name_or_path)


def load_rank_weights(name_or_path: str, root: str) -> RankWeights:
    """The ranking table: defaults, with the profile's optional ``[rank]`` table on top."""
    table = _profile_table(name_or_path, root).get("rank", {})
    return complete_weights(_convert(table, RankWeights, name_or_path))


def _profile_table(name_or_path: str, root: str) -> dict[str, Any]:
    data = read_profile_file(name_or_path, root)
    if data is None:
        preset = profiles_dir() / f"{name_or_path}.toml"
        if not preset.is_file():
            names = ", ".join(available_profiles())
            raise UsageError(f"unknown profile {name_or_path!r} (available: {names})")
        data = preset.read_bytes()
    try:
        table = msgspec.toml.decode(data)
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
