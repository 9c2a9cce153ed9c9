"""Untrusted model output -> a safe rewrite, or a reason why not.

The model may answer anything. Only a JSON object survives, code fences stripped; only
identifiers that are identifiers (dotted allowed) and literals of printable text, capped in
count and length. Nothing becomes an rg flag, a regex, a path or a glob: identifiers are
searched word-bounded and literals as fixed strings, both escaped, always after ``-e``.
"""

from __future__ import annotations

import re

import msgspec

from cq.model import Focus

MAX_IDENTIFIERS = 12
MAX_LITERALS = 4
MAX_LENGTH = 80
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*){0,4}")
_FENCE = re.compile(r"^\s*```[A-Za-z]*\s*\n?(.*?)\n?\s*```\s*$", re.S)


class ModelAnswer(msgspec.Struct, frozen=True, kw_only=True):
    identifiers: tuple[str, ...] = ()
    literals: tuple[str, ...] = ()
    focus: Focus = "all"


class InvalidAnswer(Exception):
    """The model's answer cannot be used; the message is the summary's fallback reason."""


def parse_answer(content: str) -> ModelAnswer:
    """Decode and sanitise the model's message content."""
    match = _FENCE.match(content)
    text = match.group(1) if match else content
    try:
        data = msgspec.json.decode(text.strip().encode())
    except msgspec.DecodeError:
        raise InvalidAnswer("invalid JSON from the model") from None
    if not isinstance(data, dict):
        raise InvalidAnswer("model answer is not a JSON object")
    identifiers = _clean(data.get("identifiers"), _is_identifier, MAX_IDENTIFIERS)
    literals = _clean(data.get("literals"), _is_literal, MAX_LITERALS)
    if not identifiers and not literals:
        raise InvalidAnswer("model answer has no usable patterns")
    focus = data.get("focus")
    return ModelAnswer(
        identifiers=identifiers,
        literals=literals,
        focus=focus if focus in ("implementation", "tests", "all") else "all",
    )


def _clean(value: object, ok, cap: int) -> tuple[str, ...]:  # type: ignore[no-untyped-def]
    if not isinstance(value, list):
        return ()
    kept = [v.strip() for v in value[: cap * 8] if isinstance(v, str) and ok(v.strip())]
    return tuple(dict.fromkeys(kept))[:cap]


def _is_identifier(text: str) -> bool:
    return len(text) <= MAX_LENGTH and _IDENTIFIER.fullmatch(text) is not None


def _is_literal(text: str) -> bool:
    return 3 <= len(text) <= MAX_LENGTH and text.isprintable() and not text.startswith("-")
