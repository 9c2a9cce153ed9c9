"""Text from a searched tree made safe to print, and warnings on stderr.

File contents and file names are untrusted: an ``ESC ] 0 ; ... BEL`` in a line retitles a
terminal, a CR overwrites what came before, a newline in a file name breaks a report line.
``visible`` turns every such character into a visible escape (``\\x1b``, ``\\r``,
``\\u202e``); tabs stay, as indentation. Imports nothing else of cq.
"""

from __future__ import annotations

import re
import sys

# C0 controls but tab, DEL, C1 controls (a terminal may take U+009B for CSI), the bidi
# overrides and isolates that reorder what is shown ("Trojan Source"), and the Unicode line
# and paragraph separators; lone surrogates (undecodable bytes of a command line) too, which
# no UTF-8 stream can carry.
_UNSAFE = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_NAMED = {"\n": "\\n", "\r": "\\r"}
_MAX_WARNINGS = 1000
_warned: set[str] = set()


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with control characters escaped; unchanged (same object) when it has none."""
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


def forget_warnings() -> None:
    """Warn again from here on: a long-lived process running one search after another (the
    cq server's search processes) warns once per search, as a one-shot cq does."""
    _warned.clear()


def warn(message: str) -> None:
    """``cq: warning: <message>`` on stderr, once per message per process."""
    if message in _warned or len(_warned) >= _MAX_WARNINGS:
        return
    _warned.add(message)
    sys.stderr.write(f"cq: warning: {visible(message)}\n")
    sys.stderr.flush()
