"""Versions that key the persistent records cache: cq and the grammars."""

from __future__ import annotations

from functools import cache


@cache
def grammar_versions() -> str:
    """``cq<ver>-tsp<ver>-tsr<ver>-ts<ver>``: a change in any of them invalidates records."""
    from importlib.metadata import PackageNotFoundError, version

    from cq import __version__

    parts = [f"cq{__version__}"]
    for short, dist in (
        ("ts", "tree-sitter"),
        ("tsp", "tree-sitter-python"),
        ("tsr", "tree-sitter-rust"),
    ):
        try:
            parts.append(f"{short}{version(dist)}")
        except PackageNotFoundError:
            parts.append(f"{short}?")
    return "-".join(parts)
