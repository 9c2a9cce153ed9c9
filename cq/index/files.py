"""Which language an indexed file is, by extension (the same rule as the search's scope)."""

from __future__ import annotations


def language_of_path(path: str) -> str:
    return "rust" if path.endswith(".rs") else "python"
