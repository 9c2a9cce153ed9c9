"""rg's regex and glob errors told about what the user wrote, on one line.

rg joins its ``-e`` patterns into one regex, each wrapped as ``(?:...)``, and reports a parse
error against that whole text with a caret line under the fault. The user wrote none of the
wrapping, and cq's errors are one line: ``regex_error`` names the user's pattern and what the
caret was under, as columns of that pattern.
"""

from __future__ import annotations

_INDENT = "    "  # rg's indent of the pattern and caret lines
_UNOPENED = ["error: unopened group"]
_GLOB = "error parsing glob "


def glob_error(message: str, excludes: tuple[str, ...] = ()) -> str | None:
    """rg's ``error parsing glob '[abc': unclosed character class ...`` as the fault in a
    glob the user gave (``--include``/``-g``, ``--exclude``), not as rg failing; an
    ``--exclude`` glob as the user wrote it, without the ``!`` cq passes rg before it;
    None for another error."""
    at = message.find(_GLOB)
    if at < 0:
        return None
    said = message[at + len(_GLOB) :]
    end = said.find("': ")
    if said.startswith("'!") and end > 0 and said[2:end] in excludes:
        return f"invalid glob '{said[2:end]}'{said[end + 1 :]} (an --exclude glob)"
    return f"invalid glob {said} (an --include or --exclude glob)"


def regex_error(messages: list[str], regexes: list[str]) -> str | None:
    """rg's ``regex parse error`` (stderr lines) restated on one line for the one of
    ``regexes`` it is in (``regex parse error in 'a(' at column 2 ('('): unclosed group``);
    rg's own words on one line when it cannot be placed; None for another error."""
    heads = [i for i, line in enumerate(messages) if "regex parse error:" in line]
    if not heads:
        return None
    at = heads[0]
    shown, carets, rest = _parts(messages[at + 1 :])
    joined = "|".join(f"(?:{regex})" for regex in regexes)
    if shown != joined or carets is None:  # not the layout expected: rg's words as they are
        return " ".join(["regex parse error:", *(m.strip() for m in messages[at + 1 :])])
    start, width = carets
    regex, col = _place(regexes, start)
    if col is None or (col == len(regex) and rest[:1] in (["error: unclosed group"], _UNOPENED)):
        # in the wrapping, which the pattern's own fault unbalanced (``a(b``, ``foo)``)
        col, width = _unbalanced(regex), 1
    width = max(1, min(width, len(regex) - col))  # past the end (``a{``): one caret there
    said = "; ".join(line.strip().removeprefix("error: ") for line in rest if line.strip())
    return f"regex parse error in '{regex}' {_where(regex, col, width)}: {said or 'invalid'}"


def _where(regex: str, col: int, width: int) -> str:
    """The caret's place as 1-based columns of ``regex`` and the text it was under."""
    if col >= len(regex):  # the pattern ended too soon (``a{``)
        return f"at its end (column {col + 1})"
    if width == 1:
        return f"at column {col + 1} ('{regex[col]}')"
    return f"at columns {col + 1}-{col + width} ('{regex[col : col + width]}')"


def _parts(lines: list[str]) -> tuple[str | None, tuple[int, int] | None, list[str]]:
    """The pattern line, the carets' (column, width) and the lines after them."""
    if len(lines) < 2 or not lines[0].startswith(_INDENT) or not lines[1].startswith(_INDENT):
        return None, None, lines
    caret = lines[1][len(_INDENT) :]
    start = len(caret) - len(caret.lstrip(" "))
    width = len(caret.strip())
    if not width or set(caret.strip()) != {"^"}:
        return None, None, lines
    return lines[0][len(_INDENT) :], (start, width), lines[2:]


def _place(regexes: list[str], start: int) -> tuple[str, int | None]:
    """The regex the column falls in and the column within it: its length on the wrapping's
    ``)``, where rg points when the pattern ended too soon (``a{``); None in ``(?:``."""
    pos = 0
    for n, regex in enumerate(regexes, 1):
        inner = pos + len("(?:")
        end = inner + len(regex)
        if start <= end or n == len(regexes):  # past the whole text: the last one ended
            break
        pos = end + len(")|")
    return regex, (min(start - inner, len(regex)) if start >= inner else None)


def _unbalanced(regex: str) -> int:
    """What unbalanced the wrapping: the first ``)`` opening no group (``foo)``: 3), else the
    last group left open (``a(b``: 1), else a trailing backslash escaping the wrapping's
    ``)``; escapes and classes skipped."""
    opened: list[int] = []
    i = 0
    while i < len(regex):
        ch = regex[i]
        if ch == "\\":
            if i == len(regex) - 1:
                return i if not opened else opened[-1]
            i += 1
        elif ch == "[":
            i = _class_end(regex, i)
        elif ch == "(":
            opened.append(i)
        elif ch == ")":
            if not opened:
                return i
            opened.pop()
        i += 1
    return opened[-1] if opened else 0


def _class_end(regex: str, i: int) -> int:
    """The index of the ``]`` closing the class opened at ``i`` (nested ones too)."""
    depth, i = 1, i + 1
    if regex[i : i + 1] == "^":
        i += 1
    if regex[i : i + 1] == "]":  # a first ``]`` is literal
        i += 1
    while i < len(regex) and depth:
        if regex[i] == "\\":
            i += 1
        elif regex[i] == "[":
            depth += 1
        elif regex[i] == "]":
            depth -= 1
            if not depth:
                return i
        i += 1
    return i
