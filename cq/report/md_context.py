"""The lines around the shown hits (``-A``/``-B``/``-C``), as rg prints them: per file, hit
lines ``N:text``, context lines ``N-text``, ``--`` between blocks that do not touch."""

from __future__ import annotations

import msgspec

from cq.model import Finding
from cq.report.md_text import code, fence, shown_line


def context_lines(findings: tuple[Finding, ...]) -> list[str]:
    """One fenced block per file, files in the order of their best shown hit; empty when no
    finding carries context lines (none were asked for)."""
    by_file: dict[str, dict[int, tuple[str, bool]]] = {}
    language: dict[str, str] = {}
    for f in findings:
        if isinstance(f.context_before, msgspec.UnsetType):
            continue
        lines = by_file.setdefault(f.file, {})
        language.setdefault(f.file, f.language)
        around = (*f.context_before, *(f.context_after or ()))
        for near in around:
            lines.setdefault(near.line, (near.text, False))
        lines[f.line] = (shown_line(f.line_text, f.line_window), True)
    if not by_file:
        return []
    out = ["## Lines around the hits"]
    for file, lines in by_file.items():
        body: list[str] = []
        previous = None
        for n in sorted(lines):
            if previous is not None and n > previous + 1:
                body.append("--")
            text, hit = lines[n]
            body.append(f"{n}{':' if hit else '-'}{text}")
            previous = n
        out += ["", f"### {code(file)}", *fence(body, language[file])]
    return out
