"""Untrusted model output -> a safe rewrite, or a reason why not.

The model may answer anything. Only a JSON object survives, code fences stripped; only
identifiers that are identifiers (dotted allowed) and literals of printable text, capped in
count and length. Nothing becomes an rg flag, a regex, a path or a glob: identifiers are
searched word-bounded and literals as fixed strings, both escaped, always after ``-e``.
An answer nested deeper than ``MAX_DEPTH`` levels is refused before it is decoded (msgspec
recurses per level: 1,000 nested brackets raised ``RecursionError``); its size is bounded
by the reply's (``llm.MAX_BODY_BYTES``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import msgspec

from cq.model import Focus
from cq.model.tuning import RewriteTuning

MAX_DEPTH = 32  # the answer needs 2 levels (an object of arrays)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*){0,4}")
_LANGUAGE = re.compile(r"[A-Za-z]*")
_JSON_SYNTAX = re.compile(rb'["\\\[\]{}]')


class ModelAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """What the model is asked for (its JSON schema is generated from this struct)."""

    identifiers: tuple[str, ...]
    literals: tuple[str, ...]
    focus: Focus


class InvalidAnswer(Exception):
    """The model's answer cannot be used; the message is the summary's fallback reason."""


def parse_answer(content: str, t: RewriteTuning) -> ModelAnswer:
    """Decode and sanitise the model's message content (capped as ``t`` says)."""
    raw = _unfenced(content).encode("utf-8", "surrogatepass")
    if json_depth(raw) > MAX_DEPTH:
        raise InvalidAnswer(f"model answer nested deeper than {MAX_DEPTH} levels")
    try:
        data = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        raise InvalidAnswer("invalid JSON from the model") from None
    if not isinstance(data, dict):
        raise InvalidAnswer("model answer is not a JSON object")
    length = t.max_pattern_length
    identifiers = _clean(
        data.get("identifiers"), lambda v: _is_identifier(v, length), t.llm_identifiers
    )
    literals = _clean(data.get("literals"), lambda v: _is_literal(v, length), t.llm_literals)
    if not identifiers and not literals:
        raise InvalidAnswer("model answer has no usable patterns")
    focus = data.get("focus")
    return ModelAnswer(
        identifiers=identifiers,
        literals=literals,
        focus=focus if focus in ("implementation", "tests", "all") else "all",
    )


def json_depth(raw: bytes, stop: int = MAX_DEPTH) -> int:
    """How deep arrays and objects nest in JSON text (counting stops past ``stop``), in one
    pass over its brackets, quotes and backslashes; valid or not."""
    depth = deepest = 0
    in_string = False
    escaped = -1  # the position a backslash in a string escapes
    for match in _JSON_SYNTAX.finditer(raw):
        at = match.start()
        char = raw[at]
        if at == escaped:
            continue
        if char == 0x5C:  # backslash
            escaped = at + 1 if in_string else escaped
        elif char == 0x22:  # quote
            in_string = not in_string
        elif in_string:
            continue
        elif char in b"[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > stop:
                break
        else:
            depth -= 1
    return deepest


def _unfenced(content: str) -> str:
    """The JSON inside a Markdown code fence (```json ... ```), or all of ``content``.

    String operations: a regex with a lazy body before ``\\s*```\\s*$`` rescanned the
    whitespace after each position of the body (quadratic in a blank-heavy answer).
    """
    text = content.strip()
    if len(text) < 6 or not (text.startswith("```") and text.endswith("```")):
        return text
    body = text[3:-3]
    return body[_LANGUAGE.match(body).end() :].strip()  # type: ignore[union-attr]


def _clean(value: object, ok: Callable[[str], bool], cap: int) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    kept = [v.strip() for v in value[: cap * 8] if isinstance(v, str) and ok(v.strip())]
    return tuple(dict.fromkeys(kept))[:cap]


def _is_identifier(text: str, length: int) -> bool:
    return len(text) <= length and _IDENTIFIER.fullmatch(text) is not None


def _is_literal(text: str, length: int) -> bool:
    return 3 <= len(text) <= length and text.isprintable() and not text.startswith("-")
