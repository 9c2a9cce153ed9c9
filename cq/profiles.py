"""Search presets: TOML files named by a name, the user's own
(``$XDG_CONFIG_HOME/cq/profiles/NAME.toml``, which replaces a shipped one of the same name) or
shipped in the wheel (``cq/_profiles``); or a TOML file inside the searched root
(``cq.confine.read_profile_file``: a profile path is a path the request names, so it obeys
the same confinement as ``--in``). Both are read with the same checks (a regular file of at
most 1 MiB).

A profile's top-level keys are its ``Limits``; its tables (``[rank]``, ``[classify]``,
``[enrich]``, ``[rewrite]``, ``[parse]``, ``[scale]``, ``[report]``, ``[index]``) override
single fields of ``cq.model.tuning.Tuning`` (``[semantic]`` is the semantic stage's). A few
environment variables override the same fields last (``CQ_POOL_MIN_BYTES``, ``CQ_MAX_WORKERS``,
``CQ_ENRICH_BUDGET_MS``, ``CQ_ENRICH_LIBCST_HITS``, ``CQ_ENRICH_MAX_BYTES``,
``CQ_INDEX_AUTO_BYTES``).

Every value is checked here, not where it is used: a limit of 0 or below, a timeout that is
not a positive finite number, a negative tuned number or a key cq does not know would
otherwise give a search that silently finds nothing. Errors read ``profile NAME: KEY: ...``.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
from pathlib import Path
from typing import Any, NoReturn, TypeVar, get_args

import msgspec

from cq.confine import is_profile_name, read_profile_file, read_small_file
from cq.env import env_choice, env_number, user_config_dir
from cq.errors import UsageError
from cq.model import Category, Limits, RankWeights, Role, complete_weights
from cq.model.tuning import Tuning
from cq.tables import TableError, convert_table

_T = TypeVar("_T", bound=msgspec.Struct)

_PACKAGED = Path(__file__).parent / "_profiles"
_SOURCE_TREE = Path(__file__).parent.parent / "profiles"


def profiles_dir() -> Path:
    """The wheel's copy when installed, the repository's ``profiles/`` in a checkout."""
    return _PACKAGED if _PACKAGED.is_dir() else _SOURCE_TREE


def user_profiles_dir() -> Path:
    """Where a user keeps profiles of their own, chosen by name from the CLI and MCP."""
    return user_config_dir() / "profiles"


def preset_profiles() -> list[str]:
    """The names of the profiles cq ships (``audit``, ``interactive``, ...)."""
    return sorted(p.stem for p in profiles_dir().glob("*.toml"))


def available_profiles() -> list[str]:
    """The names ``--profile`` accepts: the shipped presets and the user's own."""
    names = set(preset_profiles())
    with contextlib.suppress(OSError):
        names |= {p.stem for p in user_profiles_dir().glob("*.toml") if is_profile_name(p.stem)}
    return sorted(names)


def load_profile(name_or_path: str, root: str) -> Limits:
    """Limits from a named preset or from a TOML file inside ``root`` (a relative path is
    relative to it); a clear error otherwise."""
    return limits_of(read_profile(name_or_path, root), name_or_path)


def limits_of(table: dict[str, Any], name_or_path: str) -> Limits:
    """The limits of a parsed profile (its top-level keys), checked."""
    table = dict(table)
    for group in (*Tuning.__struct_fields__, "semantic"):
        table.pop(group, None)
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


_ENV = (  # variable, group, field (its kind and range: ``cq.env.SETTINGS``)
    ("CQ_POOL_MIN_BYTES", "scale", "pool_min_bytes"),
    ("CQ_MAX_WORKERS", "scale", "max_workers"),
    ("CQ_ENRICH_BUDGET_MS", "enrich", "budget_ms"),
    ("CQ_ENRICH_LIBCST_HITS", "enrich", "libcst_hits"),
    ("CQ_ENRICH_MAX_BYTES", "enrich", "max_payload_bytes"),
    ("CQ_INDEX_AUTO_BYTES", "index", "auto_build_bytes"),
)


def load_tuning(name_or_path: str, root: str) -> Tuning:
    """The tuning table: defaults, the profile's tables on top, then the environment's."""
    return tuning_of(read_profile(name_or_path, root), name_or_path)


def read_profile(name_or_path: str, root: str) -> dict[str, Any]:
    """The profile's TOML, parsed: a named preset or a file inside ``root``. A search parses
    it once (``cq.settings``) and reads every table of it from this."""
    return _profile_table(name_or_path, root)


def tuning_of(table: dict[str, Any], name_or_path: str) -> Tuning:
    """The tuning groups of a parsed profile, the environment's values on top, checked."""
    groups = {name: table.get(name, {}) for name in Tuning.__struct_fields__}
    for name, value in groups.items():
        if not isinstance(value, dict):
            _invalid(name_or_path, name, "must be a table")
    for variable, group, field in _ENV:
        value = env_number(variable)  # checked by cq.env
        if value is not None:
            groups[group] = {**groups[group], field: value}
    embed = env_choice("CQ_EMBED")  # the optional dense signal, over ``[embed] enabled``
    if embed is not None:
        groups["embed"] = {**groups["embed"], "enabled": embed == "on"}
    defaults = Tuning()
    tuning = {
        name: _convert(
            _nested_defaults(table_, getattr(defaults, name)),
            type(getattr(defaults, name)),
            name_or_path,
            f"{name}.",
        )
        for name, table_ in groups.items()
    }
    _check_rank(name_or_path, tuning["rank"])  # type: ignore[arg-type]
    for name, group in tuning.items():
        _check_numbers(name_or_path, name, group)  # type: ignore[arg-type]
    result = Tuning(**tuning)  # type: ignore[arg-type]
    return msgspec.structs.replace(result, rank=complete_weights(result.rank))


def _nested_defaults(table: dict[str, Any], default: msgspec.Struct) -> dict[str, Any]:
    """A group's table with each nested table (``[index.python]``) laid over that field's
    default, so the keys it does not name keep their defaults rather than the type's."""
    out = dict(table)
    for key, value in table.items():
        inner = getattr(default, key, None)
        if isinstance(value, dict) and isinstance(inner, msgspec.Struct):
            out[key] = {**msgspec.to_builtins(inner), **value}
    return out


def _check_numbers(name_or_path: str, prefix: str, group: msgspec.Struct) -> None:
    """Every number of ``group`` finite and 0 or more; a group's ``signed`` fields (a weight
    that counts against, ``SignalWeights.test``) finite only."""
    signed = getattr(type(group), "signed", frozenset())
    for name in group.__struct_fields__:  # not ``structs.fields``: it resolves annotations
        value = getattr(group, name)
        if isinstance(value, msgspec.Struct):
            _check_numbers(name_or_path, f"{prefix}.{name}", value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            if name not in signed:
                _check_weight(name_or_path, f"{prefix}.{name}", value)
            elif not math.isfinite(value):
                _invalid(name_or_path, f"{prefix}.{name}", f"must be a finite number, not {value}")


def load_rank_weights(name_or_path: str, root: str) -> RankWeights:
    """The ranking table: defaults, with the profile's optional ``[rank]`` table on top."""
    return load_tuning(name_or_path, root).rank


def _check_rank(name_or_path: str, weights: RankWeights) -> None:
    for kind, allowed in (("category", get_args(Category)), ("role", get_args(Role))):
        for key, value in getattr(weights, kind).items():
            if key not in allowed:
                known = ", ".join(allowed)
                _invalid(name_or_path, f"rank.{kind}.{key}", f"unknown {kind} (known: {known})")
            _check_weight(name_or_path, f"rank.{kind}.{key}", value)


def section_of(table: dict[str, Any], name_or_path: str, section: str) -> dict[str, Any]:
    """One optional table of a parsed profile (``[semantic]``), empty when absent."""
    value = table.get(section, {})
    if not isinstance(value, dict):
        raise UsageError(f"profile {name_or_path}: [{section}] is not a table")
    return value


def section_as(table: dict[str, Any], kind: type[_T], name_or_path: str, section: str) -> _T:
    """One optional table of a parsed profile (``[semantic]``) as ``kind``, checked as the
    tuning groups are: an unknown key, a value of the wrong type or a number that is not
    finite and 0 or more is refused naming the key (``semantic.wait_ms``)."""
    value = _convert(section_of(table, name_or_path, section), kind, name_or_path, f"{section}.")
    _check_numbers(name_or_path, section, value)
    return value


def _check_weight(name_or_path: str, key: str, value: float) -> None:
    if not (math.isfinite(value) and value >= 0):
        _invalid(name_or_path, key, f"must be a finite number of 0 or more, not {value}")


def _profile_table(name_or_path: str, root: str) -> dict[str, Any]:
    data = read_profile_file(name_or_path, root)
    if data is None:
        data = _named_profile(name_or_path)
    try:
        table = msgspec.toml.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise UsageError(f"profile {name_or_path}: not valid TOML: {exc}") from None
    if not isinstance(table, dict):
        raise UsageError(f"profile {name_or_path}: not a table")
    return table


def _named_profile(name: str) -> bytes:
    """The user's profile of this name, else the shipped preset: the user's own word wins
    (``interactive.toml`` there is their default)."""
    own = user_profiles_dir() / f"{name}.toml"
    if os.path.lexists(own):
        return read_small_file(str(own), str(own))
    preset = profiles_dir() / f"{name}.toml"
    if not preset.is_file():
        names = ", ".join(available_profiles())
        raise UsageError(
            f"unknown profile {name!r} (available: {names}; "
            f"your own go in {user_profiles_dir()}/NAME.toml)"
        )
    return preset.read_bytes()


def _convert(table: object, kind: type[_T], name_or_path: str, prefix: str) -> _T:
    """``table`` as ``kind``; msgspec's error rephrased to name the key at fault."""
    try:
        return convert_table(table, kind, prefix)
    except TableError as exc:
        _invalid(name_or_path, exc.key, exc.problem)


def _invalid(name_or_path: str, key: str, problem: str) -> NoReturn:
    raise UsageError(f"profile {name_or_path}: {key}: {problem}")
