"""Install and uninstall the agent files, idempotently and without clobbering user edits.

A file, block or JSON member is cq's to replace or remove only while its content hash equals
the hash recorded when cq wrote it (or it is identical to what cq would write now); anything
else is a user edit and is kept unless ``force``. Blocks live between markers in a file the user
owns (CLAUDE.md, AGENTS.md, Codex's config.toml); the ``mcpServers.cq`` member lives in a JSON
file the user or the agent also writes (.mcp.json, ~/.claude.json). Uninstall removes the block
or member and leaves every other byte as it was. A file that does not parse is never touched.
"""

from __future__ import annotations

import contextlib
import json
import tomllib
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Literal, TypeVar

import msgspec

from cq.agent import jsonedit
from cq.agent import manifest as mf
from cq.agent.nesting import too_deep
from cq.agent.safefs import Tree
from cq.agent.targets import (
    CODEX_SERVERS,
    JSON_SERVERS,
    SERVER_NAME,
    Agent,
    Artifact,
    Kind,
    Markers,
    Scope,
    anchors,
    artifacts,
    label,
    markers,
)
from cq.errors import CqError

Outcome = Literal["written", "updated", "overwritten", "unchanged", "kept", "removed", "absent"]
_T = TypeVar("_T")


class Action(msgspec.Struct, frozen=True):
    """What happened to one path, for the one-line-per-file report."""

    path: str
    outcome: Outcome
    note: str = ""


class _Done(msgspec.Struct, frozen=True):
    """One path an install changed, and what puts it back: its text before (None: it was
    not there, so it and the directories made for it go), and its manifest entry before."""

    path: str
    before: str | None
    made_dirs: tuple[str, ...]
    old: mf.Entry | None


def install(
    agents: tuple[Agent, ...],
    scope: Scope,
    base: Path,
    *,
    guidance: bool,
    mcp: bool,
    force: bool,
) -> list[Action]:
    """Write every artifact, or none: a step that fails (a full disk, a link swapped in) puts
    back what the steps before it changed, and its one-line error says which paths those
    were, and any it could not put back (recorded, so uninstall removes them)."""
    manifest = mf.load(base, scope)
    tree = Tree(anchors(scope, base))
    arts = artifacts(agents, scope, base, guidance=guidance, mcp=mcp)
    for art in arts:  # every path checked before anything is written
        _guard(art.path, partial(tree.check, art.path))
    for art in arts:  # and every MCP config parsed: one that does not cannot register cq
        text = _guard(art.path, partial(tree.read, art.path)) if _is_config(art) else None
        if text is not None and (problem := _unparsed(art, text)):
            raise CqError(
                f"cannot register cq's MCP server in {art.path}: {problem}; "
                "nothing was installed: fix it, then install again"
            )
    actions: list[Action] = []
    done: list[_Done] = []
    for art in arts:
        old = manifest.find(art.path)
        try:
            before = _guard(art.path, partial(tree.read, art.path))
            step = partial(_INSTALL[art.kind], tree, art, old, force)
            entry, action = _guard(art.path, step)
        except CqError as exc:
            raise _undo(exc, tree, manifest, done) from None
        if entry is not None:
            manifest.put(entry)
        if action.outcome in _CHANGED and entry is not None:
            made = entry.created_dirs if before is None else ()
            done.append(_Done(art.path, before, made, old))
        actions.append(action)
    mf.save(manifest)
    return actions


_CHANGED = ("written", "updated", "overwritten")


def _undo(failure: CqError, tree: Tree, manifest: mf.Manifest, done: list[_Done]) -> CqError:
    """Put back what ``done`` changed, latest first; the error to raise says what happened."""
    undone, left = [], []
    for step in reversed(done):
        try:
            if step.before is None:
                tree.unlink(step.path)
                _remove_dirs(tree, step.made_dirs)
            else:
                tree.write(step.path, step.before)
        except (OSError, CqError):
            left.insert(0, step.path)
            continue
        undone.insert(0, f"{step.path} {'removed' if step.before is None else 'restored'}")
        if step.old is None:
            manifest.drop(step.path)
        else:
            manifest.put(step.old)
    with contextlib.suppress(OSError):
        mf.save(manifest)  # what is left is recorded, so uninstall removes it
    said = str(failure)
    if left:
        said += f"; still written (cq agent uninstall removes them): {', '.join(left)}"
    if undone:
        said += f"; {'the rest' if left else 'the install'} is undone: {', '.join(undone)}"
    return CqError(said)


def uninstall(agents: tuple[Agent, ...], scope: Scope, base: Path, *, force: bool) -> list[Action]:
    manifest = mf.load(base, scope)
    current = {a.path: a for a in artifacts(agents, scope, base, guidance=True, mcp=True)}
    paths = [e.path for e in reversed(manifest.entries) if e.agent in agents]
    paths += [p for p in current if manifest.find(p) is None]
    tree = Tree(anchors(scope, base))
    for path in paths:  # every path checked before anything is removed
        _guard(path, partial(tree.check, path))
    actions = []
    try:
        for path in paths:
            entry, art = manifest.find(path), current.get(path)
            kind = entry.kind if entry else art.kind  # type: ignore[union-attr]
            step = partial(_REMOVE[kind], tree, path, entry, art, force)
            action = _guard(path, step)
            if action.outcome != "absent" or entry is not None:
                actions.append(action)
            if action.outcome in ("removed", "absent"):
                manifest.drop(path)
    finally:
        mf.save(manifest)
    return actions


def _install_file(
    tree: Tree, art: Artifact, old: mf.Entry | None, force: bool
) -> tuple[mf.Entry | None, Action]:
    path = art.path
    entry = _entry(art, old)
    text = tree.read(path)
    if text is None:
        created = tree.write(path, art.content)
        return msgspec.structs.replace(entry, created_dirs=created), Action(art.path, "written")
    if text == art.content:
        return entry, Action(art.path, "unchanged")
    if old is not None and mf.digest(text) == old.sha256:
        tree.write(path, art.content)
        return entry, Action(art.path, "updated")
    if force:
        tree.write(path, art.content)
        return entry, Action(art.path, "overwritten")
    return old, Action(art.path, "kept", "edited since cq wrote it; --force replaces it")


def _install_block(
    tree: Tree, art: Artifact, old: mf.Entry | None, force: bool
) -> tuple[mf.Entry | None, Action]:
    path = art.path
    what, mark = label(art.kind, art.path), markers(art.path)
    entry = _entry(art, old)
    text = tree.read(path)
    if text is None:
        created = tree.write(path, art.content + "\n")
        entry = msgspec.structs.replace(entry, created_file=True, created_dirs=created)
        return entry, Action(art.path, "written", what)
    span = _find_block(text, mark)
    if span is None:
        if mark.begin_prefix in text:
            return old, Action(art.path, "kept", "cq block has no end marker; fix it by hand")
        sep = (
            ""
            if text in ("",) or text.endswith("\n\n")
            else "\n"
            if text.endswith("\n")
            else "\n\n"
        )
        new = text + sep + art.content + "\n"
        if problem := _toml_conflict(art.path, text, new):
            return old, Action(art.path, "kept", problem)
        tree.write(path, new)
        entry = msgspec.structs.replace(entry, separator=sep)
        return entry, Action(art.path, "written", f"{what} appended")
    start, end = span
    block = text[start:end]
    if block == art.content:
        return entry, Action(art.path, "unchanged", what)
    ours = old is not None and mf.digest(block) == old.sha256
    if ours or force:
        new = text[:start] + art.content + text[end:]
        if problem := _toml_conflict(art.path, text[:start] + text[end:], new):
            return old, Action(art.path, "kept", problem)
        tree.write(path, new)
        return entry, Action(art.path, "updated" if ours else "overwritten", what)
    return old, Action(art.path, "kept", f"{what} edited since cq wrote it; --force replaces it")


def _install_json(
    tree: Tree, art: Artifact, old: mf.Entry | None, force: bool
) -> tuple[mf.Entry | None, Action]:
    path, value = art.path, _content(art)
    what = label(art.kind, art.path)
    entry = _entry(art, old)
    text = tree.read(path)
    if text is None:
        created = tree.write(path, _fresh_json(art))
        entry = msgspec.structs.replace(
            entry, created_file=True, created_key=True, created_dirs=created
        )
        return entry, Action(art.path, "written", what)
    doc = jsonedit.document(text)  # it parses: ``_unparsed`` checked it first
    servers = _servers(text, doc)
    if servers is None:
        tree.write(path, jsonedit.add(text, doc, JSON_SERVERS, {SERVER_NAME: value}))
        entry = msgspec.structs.replace(entry, created_key=True)
        return entry, Action(art.path, "written", f"{what} added")
    member = servers.find(SERVER_NAME)
    if member is None:
        tree.write(path, jsonedit.add(text, servers, SERVER_NAME, value))
        return entry, Action(art.path, "written", f"{what} added")
    found = json.loads(text[member.value_start : member.value_end])
    if found == value:
        return entry, Action(art.path, "unchanged", what)
    ours = old is not None and _digest("json", found) == old.sha256
    if ours or force:
        tree.write(path, jsonedit.replace(text, servers, member, value))
        return entry, Action(art.path, "updated" if ours else "overwritten", what)
    return old, Action(art.path, "kept", f"{what} edited since cq wrote it; --force replaces it")


def _remove_file(
    tree: Tree, path: str, entry: mf.Entry | None, art: Artifact | None, force: bool
) -> Action:
    text = tree.read(path)
    if text is None:  # removed by hand or by the other scope (project == home)
        _remove_dirs(tree, entry.created_dirs if entry else ())
        return Action(path, "absent")
    if not (force or _is_ours("file", text, entry, art)):
        return Action(path, "kept", "edited since cq wrote it; --force removes it")
    tree.unlink(path)
    _remove_dirs(tree, entry.created_dirs if entry else ())
    return Action(path, "removed")


def _remove_block(
    tree: Tree, path: str, entry: mf.Entry | None, art: Artifact | None, force: bool
) -> Action:
    what = label("block", path)
    stored = tree.read(path)
    text = stored or ""
    span = _find_block(text, markers(path))
    if span is None:
        if entry is not None and entry.created_file and stored is not None and not text.strip():
            tree.unlink(path)  # emptied by the other scope's uninstall (project == home)
            _remove_dirs(tree, entry.created_dirs)
        return Action(path, "absent", what)
    start, end = span
    if not (force or _is_ours("block", text[start:end], entry, art)):
        return Action(path, "kept", f"{what} edited since cq wrote it; --force removes it")
    before, after = text[:start], text[end:]
    after = after.removeprefix("\n")
    if entry is not None and entry.separator and before.endswith(entry.separator):
        before = before[: len(before) - len(entry.separator)]
    rest = before + after
    if path.endswith(".toml") and (extended := _left_in_toml(rest)):
        return Action(path, "kept", f"cq's block is extended by your {extended}; remove that first")
    # Nothing but cq's block: a file install made, or (its manifest gone) the file install
    # makes, as _remove_json judges a JSON config; one that was there before cq stays.
    if not rest.strip() and (entry is None or entry.created_file):
        tree.unlink(path)
        _remove_dirs(tree, entry.created_dirs if entry else ())
    else:
        tree.write(path, rest)
    return Action(path, "removed", what)


def _remove_json(
    tree: Tree, path: str, entry: mf.Entry | None, art: Artifact | None, force: bool
) -> Action:
    what = label("json", path)
    text = tree.read(path)
    if text is None:
        return Action(path, "absent", what)
    if entry is None and art is not None and text == _fresh_json(art):
        tree.unlink(path)  # exactly the file install creates (its manifest is gone)
        return Action(path, "removed", what)
    try:
        doc = jsonedit.document(text)
        servers = _servers(text, doc)
    except jsonedit.NotAnObject as exc:
        return Action(path, "kept", f"{exc}; left alone")
    member = servers.find(SERVER_NAME) if servers else None
    if servers is None or member is None:
        return Action(path, "absent", what)
    found = json.loads(text[member.value_start : member.value_end])
    if not (force or _is_ours("json", found, entry, art)):
        return Action(path, "kept", f"{what} edited since cq wrote it; --force removes it")
    if entry is not None and entry.created_key and len(servers.members) == 1:
        rest = jsonedit.remove(text, doc, doc.find(JSON_SERVERS))  # type: ignore[arg-type]
    else:
        rest = jsonedit.remove(text, servers, member)
    if entry is not None and entry.created_file and json.loads(rest) == {}:
        tree.unlink(path)
        _remove_dirs(tree, entry.created_dirs)
    else:
        tree.write(path, rest)
    return Action(path, "removed", what)


def _servers(text: str, doc: jsonedit.Obj) -> jsonedit.Obj | None:
    """The ``mcpServers`` object of a JSON document, None if it has none."""
    member = doc.find(JSON_SERVERS)
    if member is None:
        return None
    if text[member.value_start] != "{":
        raise jsonedit.NotAnObject(f"its {JSON_SERVERS} is not a JSON object")
    return jsonedit.members(text, member.value_start)


def _fresh_json(art: Artifact) -> str:
    """The whole file install writes where there was none."""
    document = {JSON_SERVERS: {SERVER_NAME: _content(art)}}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _is_config(art: Artifact) -> bool:
    """An MCP config cq registers its server in: a JSON file's member, Codex's TOML block."""
    return art.kind == "json" or (art.kind == "block" and art.path.endswith(".toml"))


def _unparsed(art: Artifact, text: str) -> str | None:
    """Why the config ``text`` (of ``art``'s file) cannot take cq's server: it does not
    parse, cq's block aside (TOML), or it is no JSON object with an object of servers.
    Left as it is, the server is not registered, so install fails rather than say "kept"
    and exit 0 while an agent finds no cq."""
    if art.kind == "json":
        try:
            _servers(text, jsonedit.document(text))
        except jsonedit.NotAnObject as exc:
            return str(exc)
        return None
    span = _find_block(text, markers(art.path))
    rest = text if span is None else text[: span[0]] + text[span[1] :]
    if deep := too_deep(rest, toml=True):
        return deep
    try:
        tomllib.loads(rest)
    except tomllib.TOMLDecodeError as exc:
        return f"not valid TOML ({exc})"
    return None


def _toml_conflict(path: str, rest: str, new: str) -> str | None:
    """Why cq's block must not go into this TOML file (``rest`` is the file without it,
    which parses: ``_unparsed`` checked it first)."""
    if not path.endswith(".toml"):
        return None
    servers = tomllib.loads(rest).get(CODEX_SERVERS)
    if isinstance(servers, dict) and SERVER_NAME in servers:
        return f"[{CODEX_SERVERS}.{SERVER_NAME}] is defined outside cq's block; left alone"
    try:
        tomllib.loads(new)
    except tomllib.TOMLDecodeError as exc:
        return f"cq's block would make it invalid TOML ({exc}); left alone"
    return None


def _left_in_toml(rest: str) -> str | None:
    """The user's own ``[mcp_servers.cq.*]`` tables left in ``rest`` (the file without cq's
    block): alone they are a server with no command, which Codex cannot load."""
    try:
        servers = tomllib.loads(rest).get(CODEX_SERVERS)
    except (tomllib.TOMLDecodeError, RecursionError):
        return None
    server = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    if not isinstance(server, dict):
        return None
    tables = [f"[{CODEX_SERVERS}.{SERVER_NAME}.{key}]" for key in server]
    return ", ".join(tables) or f"[{CODEX_SERVERS}.{SERVER_NAME}]"


def _is_ours(kind: Kind, content: object, entry: mf.Entry | None, art: Artifact | None) -> bool:
    if entry is not None and _digest(kind, content) == entry.sha256:
        return True
    return art is not None and content == _content(art)


def _entry(art: Artifact, old: mf.Entry | None) -> mf.Entry:
    """The manifest entry for what is being written now, keeping what the first install made."""
    sha = _digest(art.kind, _content(art))
    fresh = mf.Entry(agent=art.agent, kind=art.kind, path=art.path, sha256=sha)
    if old is None:
        return fresh
    return msgspec.structs.replace(
        fresh,
        created_file=old.created_file,
        created_dirs=old.created_dirs,
        separator=old.separator,
        created_key=old.created_key,
    )


def _content(art: Artifact) -> object:
    """What is compared and hashed: a JSON member's value as data, anything else as text."""
    return json.loads(art.content) if art.kind == "json" else art.content


def _digest(kind: Kind, content: object) -> str:
    """A JSON value is hashed in canonical form: the agent may re-indent or reorder its file."""
    return mf.digest(jsonedit.canonical(content) if kind == "json" else str(content))


def _find_block(text: str, mark: Markers) -> tuple[int, int] | None:
    start = text.find(mark.begin_prefix)
    if start < 0:
        return None
    end = text.find(mark.end, start)
    return None if end < 0 else (start, end + len(mark.end))


def _remove_dirs(tree: Tree, dirs: tuple[str, ...]) -> None:
    for directory in dirs:
        try:
            tree.rmdir(directory)
        except OSError:
            return  # not empty (someone else's files) or gone: leave it and its parents


_INSTALL = {"file": _install_file, "block": _install_block, "json": _install_json}
_REMOVE = {"file": _remove_file, "block": _remove_block, "json": _remove_json}


def _guard(path: str, step: Callable[[], _T]) -> _T:
    """Run one step; an OS error becomes a one-line ``CqError`` naming the path."""
    try:
        return step()
    except OSError as exc:
        raise CqError(f"cannot update {path}: {exc.strerror or exc}") from None
