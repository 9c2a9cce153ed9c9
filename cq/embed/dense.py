"""The dense signal of one search: the question's embedding against the stored units' vectors.

A search never computes a unit's embedding and never downloads: it embeds the question (one
short forward pass; the model stays loaded in a long-lived cq process), reads the vectors the
background build stored for its first files, and ranks those files and units by cosine.
Anything missing (the extra not installed, no model, nothing stored yet for the root) is no
signal: the search answers as without the extra. When the root's index moved since the last
build, the search asks for one (``background.want``): the per-user server starts it after
the search, in a process of its own.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
from pathlib import Path
from typing import Any

from cq.model.dense import DenseRanker, DenseRanks
from cq.model.embed_tuning import EmbedTuning

CONTAINERS = frozenset({"module", "class", "struct", "enum", "trait", "impl", "mod"})


def dense_ranker(root: str, query: str, tuning: EmbedTuning) -> DenseRanker | None:
    """What ranks a search's first files by the embeddings, or None when the signal is off
    or cannot be had (see the module docstring). Imports the extra only when on."""
    if not tuning.enabled:
        return None
    try:
        import numpy  # noqa: F401
        import safetensors  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError:
        return None
    from cq.embed.models import installed

    name = tuning.model
    model_dir = installed(name)
    if model_dir is None:
        return None
    key = str(Path(root).resolve())
    _ask_for_build(key, name)
    return functools.partial(_ranks, key, query, name, model_dir)


def _ask_for_build(root: str, model: str) -> None:
    """Ask for a build when the root's index was written after the last build read it."""
    from cq.embed import background
    from cq.embed.build import manifest_of
    from cq.embed.store import Store, store_path

    listed = manifest_of(Path(root))
    if listed is None:
        return
    seen = 0
    if store_path(model).is_file():
        try:
            store = Store(model, readonly=True)
            try:
                seen = store.seen(root)
            finally:
                store.close()
        except sqlite3.Error:  # removed meanwhile (cq cache clear, the bound): built anew
            seen = 0
    if seen != listed[1]:
        background.want(root, model)


def _ranks(
    root: str, query: str, model: str, model_dir: Path, files: list[str]
) -> DenseRanks | None:
    from cq.embed.store import Store, store_path

    if not store_path(model).is_file():
        return None
    try:
        store = Store(model, readonly=True)
        try:
            refs, matrix = store.matrix(root, files)
        finally:
            store.close()
    except sqlite3.Error:  # a store being created or damaged: no signal this time
        return None
    if not refs:
        return None
    with contextlib.suppress(OSError):  # its last use: the cache bound keeps the used ones
        os.utime(store_path(model))
    scores = matrix @ _encoder(str(model_dir)).encode([query])[0]
    return ranks_of(refs, scores)


def ranks_of(refs: list[Any], scores: Any) -> DenseRanks:
    """Files by their best unit's score, units (not containers) by their own; ties by place."""
    best: dict[str, float] = {}
    units: list[tuple[float, tuple[str, str, str, int]]] = []
    for ref, score in zip(refs, scores.tolist(), strict=True):
        best[ref.path] = max(best.get(ref.path, -2.0), score)
        if ref.kind not in CONTAINERS:
            units.append((score, (ref.path, ref.qualname, ref.kind, ref.line)))
    files = sorted(best, key=lambda p: (-best[p], p))
    units.sort(key=lambda su: (-su[0], su[1][0], su[1][3], su[1][1]))
    return DenseRanks(files=files, units=[u for _, u in units])


@functools.lru_cache(maxsize=1)
def _encoder(model_dir: str) -> Any:
    """The model, loaded once per process (a warm cq keeps it between searches)."""
    from cq.embed.model import Encoder

    return Encoder(Path(model_dir))
