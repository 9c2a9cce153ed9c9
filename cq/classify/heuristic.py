"""Tier 1: a line-level guess, used where no parse is possible (or needed).

``certain`` is only set where the line alone decides: a Python comment or one-line string
in a file that has no triple-quoted strings and no backslash continuations, so no string can
span lines and a line lexer sees exactly what the parser would.
"""

from __future__ import annotations

import re

import msgspec

from cq.model import Category
from cq.model.tuning import ClassifyTuning
from cq.parse import python_syntax, rust_syntax

_PY_DEF = re.compile(rf"\s*(?:async\s+)?(?:{'|'.join(python_syntax.DEFINITION_KEYWORDS)})\s+$")
_RS_DEF = re.compile(
    r"\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+|const\s+|unsafe\s+|extern\s+\"[^\"]*\"\s+)*"
    rf"(?:{'|'.join((*rust_syntax.ITEM_KEYWORDS, 'macro_rules!'))})\s+$"
)


_STRING_PREFIX = re.compile(r"(?:(?<!\w)[rRbBuUfF]{1,2})?$")


class Guess(msgspec.Struct, frozen=True):
    category: Category
    confidence: float
    certain: bool = False


def python_lexer_is_exact(data: bytes) -> bool:
    """True when no Python string in the file can span lines."""
    return b'"""' not in data and b"'''" not in data and b"\\\n" not in data


def guess(
    language: str, line: str, col: int, length: int, exact_lexer: bool, t: ClassifyTuning
) -> Guess:
    """Best line-level guess for a hit at ``col`` of ``line`` (``t``: the confidences)."""
    col = min(col, len(line))
    context = _python_context(line, col) if language == "python" else _rust_context(line, col)
    if context == "comment":
        confidence = t.heuristic_certain if exact_lexer else t.heuristic_comment
        return Guess("comment_match", confidence, certain=exact_lexer)
    if context == "string":
        confidence = t.heuristic_certain if exact_lexer else t.heuristic_string
        return Guess("string_match", confidence, certain=exact_lexer)
    if context == "string?":  # f-string hole or a possible one-line docstring: parse decides
        return Guess("string_match", t.heuristic_unsure_string)
    before, after = line[:col], line[col + length :].lstrip()
    def_re = _PY_DEF if language == "python" else _RS_DEF
    if def_re.fullmatch(before):
        return Guess("definition", t.heuristic_definition)
    stripped = before.lstrip()
    if language == "python" and stripped.startswith(("import ", "from ")):
        kind = "from_import" if stripped.startswith("from ") else "import"
        return Guess(kind, t.heuristic_import)
    if language == "rust" and stripped.startswith(("use ", "pub use ")):
        return Guess("import", t.heuristic_import)
    if after.startswith("(") or (language == "rust" and after.startswith("!")):
        return Guess("callsite", t.heuristic_call)
    if after.startswith("=") and not after.startswith("=="):
        return Guess("assignment", t.heuristic_assignment)
    return Guess("reference", t.heuristic_reference)


def _python_context(line: str, col: int) -> str:
    """'comment', 'string' or 'code' at ``col``, lexing quotes and ``#`` on one line;
    'string?' inside an f-string (its ``{...}`` is code) or a string opening the line (a
    docstring, if it is the first statement of a body)."""
    quote = ""
    unsure = False
    i = 0
    while i < col:
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
            prefix = _STRING_PREFIX.search(line, 0, i).group()
            unsure = "f" in prefix.lower() or not line[: i - len(prefix)].strip()
        elif ch == "#":
            return "comment"
        i += 1
    if quote:
        return "string?" if unsure else "string"
    return "code"


def _rust_context(line: str, col: int) -> str:
    """Like ``_python_context`` for Rust: ``//`` comments, double-quoted strings."""
    in_string = False
    i = 0
    while i < col:
        ch = line[i]
        if in_string:
            if ch == "\\":
                i += 2
                continue
            if ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif line.startswith("//", i):
            return "comment"
        i += 1
    return "string" if in_string else "code"
