"""Search-limit presets: TOML files shipped in the wheel (``cq/_profiles``), or a TOML file
inside the searched root (``cq.confine.read_profile_file``: a profile path is a path the request
names, so it obeys the same confinement as ``--in``).

Every value is checked here, not where it is used: a limit of 0 or below, a timeout that is
not a positive finite number, a negative rank weight or a key cq does not know would
otherwise give a search that silently finds nothing. Errors read ``profile NAME: KEY: ...``.
"""

from __future__ import annotations

import math
import re
import threading
from pathlib import Path
from typing import Any, NoReturn, TypeVar, get_args

import msgspec

from cq.confine import read_profile_file
from cq.errors import UsageError
from cq.model import Category, Limits, RankWeights, Role, complete_weights

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
    table.pop("semantic", None)
    limits = _convert(table, Limits, name_or_path, "")
    for field in msgspec.structs.fields(Limits):
        value = getattr(limits, field.name)
        if field.name == "timeout_seconds":
            if not (math.isfinite(value) and 0 < value <= threading.TIMEOUT_MAX):
                problem = f"must be a positive number of seconds, not {value}"
                _invalid(name_or_path, field.name, problem)
        elif value < 1:
            _invalid(name_or_path, field.name, f"must be a positive integer, not {value}")
    return limits


def load_rank_weights(name_or_path: str, root: str) -> RankWeights:
    """The ranking table: defaults, with the profile's optional ``[rank]`` table on top."""
    table = _profile_table(name_or_path, root).get("rank", {})
    weights = _convert(table, RankWeights, name_or_path, "rank.")
    for kind, allowed in (("category", get_args(Category)), ("role", get_args(Role))):
        for key, value in getattr(weights, kind).items():
            if key not in allowed:
                known = ", ".join(allowed)
                _invalid(name_or_path, f"rank.{kind}.{key}", f"unknown {kind} (known: {known})")
            _check_weight(name_or_path, f"rank.{kind}.{key}", value)
    for field in msgspec.structs.fields(RankWeights):
        value = getattr(weights, field.name)
        if isinstance(value, int | float):
            _check_weight(name_or_path, f"rank.{field.name}", value)
    return complete_weights(weights)


def profile_section(name_or_path: str, root: str, section: str) -> dict[str, Any]:
    """One optional table of the profile (``[semantic]``), empty when absent."""
    table = _profile_table(name_or_path, root).get(section, {})
    if not isinstance(table, dict):
        raise UsageError(f"profile {name_or_path}: [{section}] is not a table")
    return table


def _check_weight(name_or_path: str, key: str, value: float) -> None:
    if not (math.isfinite(value) and value >= 0):
        _invalid(name_or_path, key, f"must be a finite number of 0 or more, not {value}")


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
        raise UsageError(f"profile {name_or_path}: not valid TOML: {exc}") from None
    if not isinstance(table, dict):
        raise UsageError(f"profile {name_or_path}: not a table")
    return table


def _convert(table: object, kind: type[_T], name_or_path: str, prefix: str) -> _T:
    """``table`` as ``kind``; msgspec's error rephrased to name the key at fault."""
    try:
        return msgspec.convert(table, kind)
    except msgspec.ValidationError as exc:
        message = str(exc)
        unknown = _UNKNOWN.fullmatch(message)
        if unknown is not None:
            known = ", ".join(f.name for f in msgspec.structs.fields(kind))
            _invalid(name_or_path, prefix + unknown[1], f"unknown key (known: {known})")
        where = _AT.search(message)
        key = prefix + where[1].lstrip(".") if where else prefix.rstrip(".") or "table"
        problem = message[: where.start()] if where else message
        _invalid(name_or_path, key.replace("[...]", ".*"), problem[:1].lower() + problem[1:])


_UNKNOWN = re.compile(r"Object contains unknown field `([^`]*)`(?: - at `\$[^`]*`)?")
_AT = re.compile(r" - at `\$([^`]*)`$")


def _invalid(name_or_path: str, key: str, problem: str) -> NoReturn:
    raise UsageError(f"profile {name_or_path}: {key}: {problem}")
