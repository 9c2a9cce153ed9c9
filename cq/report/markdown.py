"""Markdown rendering: compact, readable at a terminal and by an agent."""

from __future__ import annotations

from cq.model import Finding, SearchResult


def render_markdown(result: SearchResult) -> str:
    """The report as markdown text ending in a newline."""
    s = result.summary
    lines = [f"# cq search `{s.query}`", ""]
    langs = ", ".join(
        f"{ls.language} {ls.stats.total_matches} in {ls.stats.matched_files} files"
        for ls in s.languages
    )
    lines.append(
        f"{s.shown_findings} of {s.total_findings} findings · mode {' → '.join(s.mode_chain)}"
        f" · {langs}"
    )
    for section in result.sections:
        if not (section.finding_indexes or section.lines):
            continue
        lines += ["", f"## {section.title}", ""]
        for index in section.finding_indexes:
            lines.append(_finding_line(result.findings[index]))
        lines.extend(f"- {line}" for line in section.lines)
    lines += ["", f"run: {result.run.elapsed_ms:.0f} ms"]
    return "\n".join(lines) + "\n"


def _finding_line(f: Finding) -> str:
    return f"- `{f.file}:{f.line}:{f.col}` {f.category}: `{f.line_text.strip()}`"
