"""Embed a root's code units: what the repository index lists, what changed, in batches.

In: a root whose repository index exists (``cq.index``: its manifest says which files the
index holds and their content digests) and an installed model. Out: the store (``store.py``)
holding a vector for every unit of those files. The units are the index's own
(``cq.index.units``: functions, methods, classes, Rust items), each embedded as its path and
qualified name followed by its text, cut at ``UNIT_CHARS`` (the model reads its first 256
tokens). A file whose digest is recorded is not read again; a unit whose text hash has a
vector is not embedded again. Vectors are committed per batch, so a search meanwhile, or
after the build was stopped, uses every unit embedded so far.

Slow by nature (about 17 units per CPU-second on one thread: ~15 minutes for a 2,500-file
tree), so it runs as its own low-priority process (``python -m cq.embed.build ROOT``, started
by the per-user server, ``background.py``), one per root and model (a lock file), or in the
foreground with ``cq embed build``. After a build the cache dir is kept to its bound
(``cq.cache.footprint``: the vectors share the indexes' half, least recently used first).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec

from cq.cache.keys import storable
from cq.cache.sharing import exclusive
from cq.embed.store import Store, UnitRef, store_path

UNIT_CHARS = 2000  # 256 tokens of code are rarely more than this; the tokenizer cuts the rest
BATCH = 64  # units a commit (a stopped build loses at most one batch)
LANGUAGES = {".py": "python", ".pyi": "python", ".rs": "rust"}


class BuildReport(msgspec.Struct, frozen=True, kw_only=True):
    files: int = 0  # indexed code files of the root
    files_scanned: int = 0  # read again: new or changed since the last build
    units: int = 0  # units of the root
    embedded: int = 0  # vectors computed by this build
    busy: bool = False  # another build of this root held the lock
    no_index: bool = False  # the root has no repository index yet


def unit_text(path: str, qualname: str, kind: str, text: str) -> str:
    """What is embedded for one unit: where it is, then its own text."""
    name = "" if kind == "module" else f" {qualname}"
    return f"{path}{name}\n{text.strip()[:UNIT_CHARS]}"


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def file_texts(path: str, source: str) -> list[tuple[UnitRef, str]]:
    """The units of one file with the text embedded for each (empty units left out)."""
    from cq.index.units import file_units

    language = LANGUAGES.get(Path(path).suffix)
    if language is None:
        return []
    out = []
    for u in file_units(source, language):
        if u.text.strip():
            text = unit_text(path, u.qualname, u.kind, u.text)
            out.append((UnitRef(path, u.qualname, u.kind, u.line, text_key(text)), text))
    return out


def manifest_of(root: Path) -> tuple[dict[str, str], int] | None:
    """The index's code files (path -> digest) and its manifest's mtime; None: no index."""
    from cq.index import indexed_files

    listed = indexed_files(root)
    if listed is None:
        return None
    files, mtime_ns = listed
    return {p: d for p, d in files.items() if Path(p).suffix in LANGUAGES}, mtime_ns


@contextlib.contextmanager
def _root_lock(model: str, root: str) -> Iterator[bool]:
    """Held by the one build of ``root``; yields False when another holds it."""
    name = hashlib.blake2b(os.fsencode(root), digest_size=10).hexdigest()  # not UTF-8 too
    lock = store_path(model).with_name(f"build-{name}.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with exclusive(os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)) as had:
        yield had


def build(root: Path, model: str, progress: Callable[[str], None] | None = None) -> BuildReport:
    """Bring the store up to date with ``root``'s index (see the module docstring)."""
    from cq.embed.model import Encoder, ModelError
    from cq.embed.models import installed
    from cq.rooted import read_inside

    model_dir = installed(model)
    if model_dir is None:
        raise ModelError(f"model {model} is not installed: run cq embed fetch {model}")
    key = str(root.resolve())
    listed = manifest_of(root)
    if listed is None:
        return BuildReport(no_index=True)
    files, manifest_ns = listed
    with _root_lock(model, key) as held:
        if not held:
            return BuildReport(files=len(files), busy=True)
        store = Store(model)
        try:
            known = store.files(key)
            store.drop_files(key, [p for p in known if p not in files])
            changed = sorted(p for p, d in files.items() if known.get(p) != d)
            texts: dict[str, str] = {}
            scanned: dict[str, tuple[str, list[UnitRef]]] = {}
            for path in filter(storable, changed):  # the store records no other name
                try:
                    source = read_inside(root, path).decode("utf-8", "replace")
                except (OSError, ValueError):
                    continue  # gone or unreadable since the index saw it: the next build
                units = file_texts(path, source)
                texts.update((u.key, t) for u, t in units)
                scanned[path] = (files[path], [u for u, _ in units])
            store.put_files(key, scanned)
            todo = store.missing(list(texts))
            todo.sort(key=lambda k: (len(texts[k]), k))  # like lengths batch with less padding
            encoder = Encoder(model_dir) if todo else None
            for i in range(0, len(todo), BATCH):
                batch = todo[i : i + BATCH]
                store.put_vectors(batch, encoder.encode([texts[k] for k in batch]))  # type: ignore[union-attr]
                if progress:
                    progress(f"embedded {min(i + BATCH, len(todo))}/{len(todo)} units")
            store.mark_seen(key, manifest_ns)
            _bound(store_path(model).parent)
            return BuildReport(
                files=len(files),
                files_scanned=len(scanned),
                units=store.units(key),
                embedded=len(todo),
            )
        finally:
            store.close()


def _bound(directory: Path) -> None:
    """Keep the cache to ``CQ_CACHE_MAX_MB`` now that the vectors grew: least recently used
    indexes and other models' vectors go first, never these (``cq.cache.footprint``)."""
    from cq.cache.footprint import trim
    from cq.cache.place import cache_dir, max_bytes_from_env

    with contextlib.suppress(OSError):
        trim(cache_dir(), max_bytes_from_env(), keep=directory)


def main(argv: list[str] | None = None) -> int:
    """``python -m cq.embed.build ROOT [--model M]``: the background build's process."""
    ap = argparse.ArgumentParser(prog="cq.embed.build")
    ap.add_argument("root")
    ap.add_argument("--model", default=None)
    args = ap.parse_args(argv)
    from cq.embed.models import DEFAULT_MODEL
    from cq.errors import CqError

    with contextlib.suppress(OSError):
        os.nice(10)  # below every search: it is never what a user waits for
    try:
        build(Path(args.root), args.model or DEFAULT_MODEL)
    except CqError as exc:
        print(f"cq: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
