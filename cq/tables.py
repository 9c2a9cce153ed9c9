"""A TOML table as its typed ``msgspec.Struct``, with msgspec's error said as the key at fault
(``rewrite.timeout: expected `float | null`, got `str```, ``limits.bogus: unknown key (known:
...)``): the profiles and the user's config file are the user's own writing, and a JSONPath
(``$.rewrite``) is not how they spelt it."""

from __future__ import annotations

import re
from typing import TypeVar

import msgspec

_T = TypeVar("_T", bound=msgspec.Struct)

_UNKNOWN = re.compile(r"Object contains unknown field `([^`]*)`(?: - at `\$([^`]*)`)?")
_AT = re.compile(r" - at `\$([^`]*)`$")


class TableError(Exception):
    """A table that is not its kind: the dotted ``key`` at fault and what is wrong with it."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key}: {problem}")
        self.key, self.problem = key, problem


def convert_table(table: object, kind: type[_T], prefix: str) -> _T:
    """``table`` as ``kind``; ``TableError`` naming the key (after ``prefix``, ``"limits."``)."""
    try:
        return msgspec.convert(table, kind)
    except msgspec.ValidationError as exc:
        message = str(exc)
        unknown = _UNKNOWN.fullmatch(message)
        if unknown is not None:
            nested = (unknown[2] or "").lstrip(".")
            key = prefix + (f"{nested}." if nested else "") + unknown[1]
            if nested:  # the nested table's own keys are not ``kind``'s
                raise TableError(key, "unknown key") from None
            known = ", ".join(f.name for f in msgspec.structs.fields(kind))
            raise TableError(key, f"unknown key (known: {known})") from None
        where = _AT.search(message)
        key = prefix + where[1].lstrip(".") if where else prefix.rstrip(".") or "table"
        problem = message[: where.start()] if where else message
        raise TableError(key.replace("[...]", ".*"), problem[:1].lower() + problem[1:]) from None
