"""What keys the persistent records cache: cq, the grammars, and the record builders' code."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

# The modules whose code decides what a file's records contain. Hashing their source means a
# fixed classifier never serves records built by the old one, with no version bump to forget.
_BUILDERS = (
    "classify/records.py",
    "classify/python_records.py",
    "classify/rust_records.py",
    "classify/analyze.py",
    "classify/slices.py",
    "classify/sliced.py",
    "parse/rust_macros.py",
)


@cache
def grammar_versions() -> str:
    """``cq<ver>-ts<ver>-tsp<ver>-tsr<ver>-<code hash>``: any change invalidates records."""
    from cq import __version__
    from cq.dists import dist_version

    parts = [f"cq{__version__}"]
    for short, dist in (
        ("ts", "tree-sitter"),
        ("tsp", "tree-sitter-python"),
        ("tsr", "tree-sitter-rust"),
    ):
        parts.append(f"{short}{dist_version(dist)}")
    digest = hashlib.blake2b(digest_size=6)
    package = Path(__file__).parent.parent
    for name in _BUILDERS:
        digest.update((package / name).read_bytes())
    parts.append(digest.hexdigest())
    return "-".join(parts)
