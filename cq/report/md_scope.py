"""The overview's line on hits the language scope left out: an ``--include`` glob let rg find
them in files cq does not read as code, which only the JSON's ``dropped_by_scope`` counted."""

from __future__ import annotations

from cq.report.md_text import code, option


def dropped_by_scope(n: int, scope: str, *, tool: bool = False) -> str:
    """Hits an ``--include`` glob let rg find in files cq does not read as code: said, with
    what shows them (``--lang auto`` for the other language's, rg itself for the rest)."""
    matches = f"{n} match{'es' if n != 1 else ''}"
    if scope == "auto":
        return (
            f"{matches} left out: not in Python or Rust files, which is all cq reads "
            "(rg itself, with the same pattern and glob, shows them)"
        )
    chosen, auto = option("--lang", scope, tool=tool), option("--lang", "auto", tool=tool)
    return (
        f"{matches} left out by {chosen}: {code(auto)} shows those in Python or Rust "
        "files, rg itself the rest"
    )
