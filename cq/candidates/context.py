"""Context lines (rg's ``-B``/``-A``): the lines around each shown hit, from the search's
``Corpus``, so they are the bytes the hit was found in, not a second reading of the file."""

from __future__ import annotations

import re

import msgspec

from cq.model import ContextLine, Finding
from cq.model.tuning import ReportTuning
from cq.parse import Corpus

# The line breaks cq numbers lines by (``lines.CrLines``: a lone CR ends a line too).
_BREAK = re.compile(rb"\r\n|\r|\n")


def with_context(
    findings: list[Finding], corpus: Corpus, before: int, after: int, report: ReportTuning
) -> list[Finding]:
    """``findings`` with ``before`` lines before and ``after`` lines after each one; a file
    that cannot be read again as it was (changed during the search) gets none."""
    if not (before or after):
        return findings
    lines: dict[str, list[bytes] | None] = {}
    out = []
    for f in findings:
        if f.file not in lines:
            source = corpus.source(f.file, f.language)
            lines[f.file] = _split(source.data) if source is not None else None
        text = lines[f.file]
        if text is None:
            out.append(f)
            continue
        first, last = max(1, f.line - before), min(len(text), f.line + after)
        out.append(
            msgspec.structs.replace(
                f,
                context_before=_lines(text, first, f.line - 1, report),
                context_after=_lines(text, f.line + 1, last, report),
            )
        )
    return out


def _split(data: bytes) -> list[bytes]:
    parts = _BREAK.split(data)
    if parts[-1] == b"":  # the last line's terminator starts no line
        parts.pop()
    return parts


def _lines(
    text: list[bytes], first: int, last: int, report: ReportTuning
) -> tuple[ContextLine, ...]:
    return tuple(ContextLine(n, _shown(text[n - 1], report)) for n in range(first, last + 1))


def _shown(raw: bytes, report: ReportTuning) -> str:
    """The line as text; past ``report.long_line`` characters, its first ``report.window``
    and "…", as a long hit line is shown."""
    line = raw.decode("utf-8", errors="replace")
    return line if len(line) <= report.long_line else line[: report.window] + "…"
