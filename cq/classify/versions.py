"""What keys the persistent records cache: cq, the grammars, and the record builders' code."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

# The modules whose code decides what a file's records contain. Hashing their source means a
# fixed classifier never serves records built by the old one, with no version bump to forget.
_BUILDERS = ("records.py", "python_records.py", "rust_records.py", "analyze.py")


@cache
def grammar_versions() -> str:
    """``cq<ver>-ts<ver>-tsp<ver>-tsr<ver>-<code hash>``: any change invalidates records."""
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
    digest = hashlib.blake2b(digest_size=6)
    here = Path(__file__).parent
    for name in _BUILDERS:
        digest.update((here / name).read_bytes())
    parts.append(digest.hexdigest())
    return "-".join(parts)
