"""Install and uninstall the agent files, idempotently and without clobbering user edits.

A file or block is cq's to replace or remove only while its content hash equals the hash
recorded when cq wrote it (or it is identical to what cq would write now); anything else is a
user edit and is kept unless ``force``. Blocks live between markers in a file the user owns
(CLAUDE.md, AGENTS.md); uninstall removes the block and leaves every other byte as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Literal, TypeVar

import msgspec

from cq.agent import manifest as mf
from cq.agent.targets import BLOCK_END, Agent, Artifact, Scope, artifacts
from cq.errors import CqError

Outcome = Literal["written", "updated", "overwritten", "unchanged", "kept", "removed", "absent"]
_BEGIN_PREFIX = "<!-- cq:agent:begin"
_T = TypeVar("_T")


class Action(msgspec.Struct, frozen=True):
    """What happened to one path, for the one-line-per-file report."""

    path: str
    outcome: Outcome
    note: str = ""


def install(
    agents: tuple[Agent, ...], scope: Scope, base: Path, *, guidance: bool, force: bool
) -> list[Action]:
    manifest = mf.load(base, scope)
    actions = []
    try:
        for art in artifacts(agents, scope, base, guidance):
            old = manifest.find(art.path)
            step = _install_block if art.kind == "block" else _install_file
            entry, action = _guard(art.path, partial(step, art, old, force))
            if entry is not None:
                manifest.put(entry)
            actions.append(action)
    finally:
        mf.save(manifest)  # record what was written even if a later step failed
    return actions


def uninstall(agents: tuple[Agent, ...], scope: Scope, base: Path, *, force: bool) -> list[Action]:
    manifest = mf.load(base, scope)
    current = {a.path: a for a in artifacts(agents, scope, base, guidance=True)}
    paths = [e.path for e in reversed(manifest.entries) if e.agent in agents]
    paths += [p for p in current if manifest.find(p) is None]
    actions = []
    try:
        for path in paths:
            entry, art = manifest.find(path), current.get(path)
            kind = entry.kind if entry else art.kind  # type: ignore[union-attr]
            step = _remove_block if kind == "block" else _remove_file
            action = _guard(path, partial(step, path, entry, art, force))
            if action.outcome != "absent" or entry is not None:
                actions.append(action)
            if action.outcome in ("removed", "absent"):
                manifest.drop(path)
    finally:
        mf.save(manifest)
    return actions


def _install_file(
    art: Artifact, old: mf.Entry | None, force: bool
) -> tuple[mf.Entry | None, Action]:
    path = Path(art.path)
    entry = _entry(art, old)
    if not path.exists():
        created = _make_dirs(path.parent)
        _write(path, art.content)
        return msgspec.structs.replace(entry, created_dirs=created), Action(art.path, "written")
    text = _read(path)
    if text == art.content:
        return entry, Action(art.path, "unchanged")
    if old is not None and mf.digest(text) == old.sha256:
        _write(path, art.content)
        return entry, Action(art.path, "updated")
    if force:
        _write(path, art.content)
        return entry, Action(art.path, "overwritten")
    return old, Action(art.path, "kept", "edited since cq wrote it; --force replaces it")


def _install_block(
    art: Artifact, old: mf.Entry | None, force: bool
) -> tuple[mf.Entry | None, Action]:
    path = Path(art.path)
    entry = _entry(art, old)
    if not path.exists():
        created = _make_dirs(path.parent)
        _write(path, art.content + "\n")
        entry = msgspec.structs.replace(entry, created_file=True, created_dirs=created)
        return entry, Action(art.path, "written", "guidance block")
    text = _read(path)
    span = _find_block(text)
    if span is None:
        if _BEGIN_PREFIX in text:
            return old, Action(art.path, "kept", "cq block has no end marker; fix it by hand")
        sep = (
            ""
            if text in ("",) or text.endswith("\n\n")
            else "\n"
            if text.endswith("\n")
            else "\n\n"
        )
        _write(path, text + sep + art.content + "\n")
        return msgspec.structs.replace(entry, separator=sep), Action(
            art.path, "written", "guidance block appended"
        )
    start, end = span
    block = text[start:end]
    if block == art.content:
        return entry, Action(art.path, "unchanged", "guidance block")
    ours = old is not None and mf.digest(block) == old.sha256
    if ours or force:
        _write(path, text[:start] + art.content + text[end:])
        return entry, Action(art.path, "updated" if ours else "overwritten", "guidance block")
    return old, Action(
        art.path, "kept", "guidance block edited since cq wrote it; --force replaces it"
    )


def _remove_file(path: str, entry: mf.Entry | None, art: Artifact | None, force: bool) -> Action:
    p = Path(path)
    if not p.exists():  # removed by hand or by the other scope (project == home)
        _remove_dirs(entry.created_dirs if entry else ())
        return Action(path, "absent")
    text = _read(p)
    if not (force or _is_ours(text, entry, art)):
        return Action(path, "kept", "edited since cq wrote it; --force removes it")
    p.unlink()
    _remove_dirs(entry.created_dirs if entry else ())
    return Action(path, "removed")


def _remove_block(path: str, entry: mf.Entry | None, art: Artifact | None, force: bool) -> Action:
    p = Path(path)
    text = _read(p) if p.exists() else ""
    span = _find_block(text)
    if span is None:
        return Action(path, "absent", "guidance block")
    start, end = span
    if not (force or _is_ours(text[start:end], entry, art)):
        return Action(path, "kept", "guidance block edited since cq wrote it; --force removes it")
    before, after = text[:start], text[end:]
    after = after.removeprefix("\n")
    if entry is not None and entry.separator and before.endswith(entry.separator):
        before = before[: len(before) - len(entry.separator)]
    rest = before + after
    if not rest.strip() and entry is not None and entry.created_file:
        p.unlink()
        _remove_dirs(entry.created_dirs)
    else:
        _write(p, rest)
    return Action(path, "removed", "guidance block")


def _is_ours(text: str, entry: mf.Entry | None, art: Artifact | None) -> bool:
    if entry is not None and mf.digest(text) == entry.sha256:
        return True
    return art is not None and text == art.content


def _entry(art: Artifact, old: mf.Entry | None) -> mf.Entry:
    """The manifest entry for what is being written now, keeping what the first install made."""
    fresh = mf.Entry(agent=art.agent, kind=art.kind, path=art.path, sha256=mf.digest(art.content))
    if old is None:
        return fresh
    return msgspec.structs.replace(
        fresh, created_file=old.created_file, created_dirs=old.created_dirs, separator=old.separator
    )


def _find_block(text: str) -> tuple[int, int] | None:
    start = text.find(_BEGIN_PREFIX)
    if start < 0:
        return None
    end = text.find(BLOCK_END, start)
    return None if end < 0 else (start, end + len(BLOCK_END))


def _make_dirs(directory: Path) -> tuple[str, ...]:
    """Create ``directory`` and its missing parents; return those created, deepest first."""
    missing = []
    probe = directory
    while not probe.exists():
        missing.append(str(probe))
        probe = probe.parent
    directory.mkdir(parents=True, exist_ok=True)
    return tuple(missing)


def _remove_dirs(dirs: tuple[str, ...]) -> None:
    for directory in dirs:
        try:
            Path(directory).rmdir()
        except OSError:
            return  # not empty (someone else's files) or gone: leave it and its parents


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="surrogateescape")


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8", errors="surrogateescape", newline="\n")


def _guard(path: str, step: Callable[[], _T]) -> _T:
    """Run one step; an OS error becomes a one-line ``CqError`` naming the path."""
    try:
        return step()
    except OSError as exc:
        raise CqError(f"cannot update {path}: {exc.strerror or exc}") from None
