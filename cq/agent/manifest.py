"""What ``cq agent install`` wrote, with content hashes, so uninstall removes exactly that.

The manifest lives in the cq cache dir (``$CQ_CACHE_DIR``, else ``$XDG_CACHE_HOME/cq``, else
``~/.cache/cq``) under ``agent/``, one JSON file per scope and install base (project root or home),
so nothing but the command files themselves lands in a project. If the manifest is lost (a
cleared cache), uninstall still recognises files and blocks identical to what this version
of cq would write.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import msgspec

from cq.agent.targets import Agent, Kind, Scope, home_dir
from cq.cache.place import AGENT


class Entry(msgspec.Struct, frozen=True):
    """One written artifact: its hash when written, and what to undo on uninstall."""

    agent: Agent
    kind: Kind
    path: str
    sha256: str
    created_file: bool = False  # a block's file did not exist before install
    created_dirs: tuple[str, ...] = ()  # directories install made, deepest first
    separator: str = ""  # text inserted before a block appended to an existing file
    created_key: bool = False  # a JSON member's parent object (mcpServers) was made by install


class Manifest(msgspec.Struct):
    base: str
    scope: Scope
    entries: list[Entry] = msgspec.field(default_factory=list)

    def find(self, path: str) -> Entry | None:
        return next((e for e in self.entries if e.path == path), None)

    def put(self, entry: Entry) -> None:
        self.entries = [e for e in self.entries if e.path != entry.path] + [entry]

    def drop(self, path: str) -> None:
        self.entries = [e for e in self.entries if e.path != path]


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def manifest_path(base: Path, scope: Scope) -> Path:
    key = hashlib.sha256(os.fsencode(f"{scope}:{base}")).hexdigest()[:16]
    return _cache_dir() / AGENT / f"manifest-{scope}-{key}.json"


def load(base: Path, scope: Scope) -> Manifest:
    path = manifest_path(base, scope)
    fresh = Manifest(base=str(base), scope=scope)
    try:
        manifest = _decode(path.read_bytes())
    except (OSError, ValueError, msgspec.ValidationError):  # DecodeError is a ValueError
        return fresh
    return manifest if (manifest.base, manifest.scope) == (fresh.base, scope) else fresh


def save(manifest: Manifest) -> None:
    path = manifest_path(Path(manifest.base), manifest.scope)
    if not manifest.entries:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        text = msgspec.json.format(msgspec.json.encode(manifest), indent=2)
    except UnicodeEncodeError:  # a base whose name is not UTF-8: its bytes as \udcXX escapes
        text = json.dumps(msgspec.to_builtins(manifest), indent=2).encode()
    tmp.write_bytes(text)
    tmp.replace(path)


def _decode(data: bytes) -> Manifest:
    try:
        return msgspec.json.decode(data, type=Manifest)
    except msgspec.DecodeError:  # msgspec refuses the escapes of lone surrogates; json reads
        return msgspec.convert(json.loads(data), Manifest)  # them back as the same name


def _cache_dir() -> Path:
    if value := os.environ.get("CQ_CACHE_DIR"):
        return Path(value)
    if value := os.environ.get("XDG_CACHE_HOME"):
        return Path(value) / "cq"
    return home_dir() / ".cache" / "cq"
