"""What to remember after a search: all a search without a rewrite loads of the rewriter
besides ``question.py`` (whether to rewrite is the ``Question``'s ``trigger``).

The rewriters themselves (vocabulary, LLM client, TOML config) load only when one runs.
"""

from __future__ import annotations

from pathlib import Path

from cq.model import Finding


def remember_primary(root: str, findings: tuple[Finding, ...], primary: int | None) -> None:
    """Keep this search's answer for the next question's "it" (``--follow-up``)."""
    if primary is not None:
        from cq.rewrite.memory import remember_subject

        remember_subject(Path(root), findings[primary].text.split(".")[-1])
