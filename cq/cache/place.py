"""Where the cache lives, what bounds it, its layout, and removing its database unopened.

``CQ_CACHE_DIR`` else the user cache dir; ``CQ_CACHE_MAX_MB`` the bound of its cache kinds
(``bound.database_share`` and ``others_share`` split it). The layout below is every name cq
gives a thing in that dir: the database (``schema.py``) and its lock (``sharing.py``; never
removed, or two processes would lock two files), the repository indexes, Pyrefly's scratch,
the embedding vectors (cache, bounded, cleared), and the embedding models and agent install
records (the user's, never removed by ``cq cache``). Imports nothing else of cq but
the cache's own ``faults`` and ``schema``.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from cq.cache import faults, schema

DEFAULT_MAX_BYTES = 512 * 1024 * 1024

INDEXES = "index"  # index/v<schema>/<root hash>/ (cq.index.location)
SCRATCH = "pyrefly-tmp"  # Pyrefly's views and empty PATH (cq.semantic)
EMBED = "embed"  # embed/<model>/vectors.sqlite (cq.embed.store) ...
MODELS = "models"  # ... and embed/models/<model>/ (cq embed fetch: not cache)
VECTORS = "vectors.sqlite"
AGENT = "agent"  # agent/manifest-*.json (cq agent install: not cache)


def cache_dir() -> Path:
    """``CQ_CACHE_DIR``, else ``$XDG_CACHE_HOME/cq``, else ``~/.cache/cq``."""
    explicit = os.environ.get("CQ_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "cq" if xdg else Path.home() / ".cache" / "cq"


def vectors_path(model: str) -> Path:
    """The vector store of embedding model ``model`` (``owner/name``)."""
    return cache_dir() / EMBED / model.replace("/", "--") / VECTORS


def max_bytes_from_env() -> int:
    """``CQ_CACHE_MAX_MB`` in bytes, the bound of the whole cache dir (default 512 MB); a
    bad value warns (once) and is ignored."""
    return _max_bytes(os.environ.get("CQ_CACHE_MAX_MB", "").strip())


@cache
def _max_bytes(value: str) -> int:
    if not value:
        return DEFAULT_MAX_BYTES
    try:
        megabytes = float(value)
    except ValueError:
        megabytes = -1.0
    if not 1 <= megabytes < 1e9:
        faults.warn(f"CQ_CACHE_MAX_MB={value!r} is not a size in MB (>= 1); using 512")
        return DEFAULT_MAX_BYTES
    return int(megabytes * 1024 * 1024)


def remove_files(path: Path, *, live: bool = True) -> str | None:
    """Delete the store at ``path`` (its own files only when ``live``: the caller holds it
    alone, ``sharing.alone``), its set-aside copies and an older cq's store, without opening
    any of them (a damaged file is removed like a sound one); why not, when a file stays."""
    own = schema.files(path)
    old = path.with_name(schema.LEGACY_NAME)  # one file (``files`` would add this cq's keys)
    legacy = [Path(f"{old}{suffix}") for suffix in ("", "-wal", "-shm")]
    victims = [Path(f"{base}.corrupt") for base in (*own, *legacy)] + legacy
    try:
        for victim in (*own, *victims) if live else victims:
            victim.unlink(missing_ok=True)
    except OSError as exc:
        return faults.describe(exc, path)
    return None
