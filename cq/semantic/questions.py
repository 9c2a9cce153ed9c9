"""The questions one search asks Pyrefly about its shown hits, and the facts made of the answers.

``Questions`` sends, all at once, a hover for every code hit and a definition request for
every hit that is not itself a definition; once Pyrefly has indexed the root, a references
request for every definition; then it reads the diagnostics published for the hits' files.
Nothing waits past the deadline. A callsite whose answer points at ``def __init__`` /
``__new__`` reports the class it constructs.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cq.model import Finding, SemanticDefinition, SemanticFacts
from cq.parse import SourceFile, split_lines
from cq.semantic.answers import (
    char_col,
    definition_fact,
    hover_type,
    identifier_at,
    locations,
    relative_to_root,
    utf16_col,
)
from cq.semantic.rpc import NOT_WITHIN_BUDGET, RpcError
from cq.semantic.server import PyreflyServer

_DIAGNOSTIC_ERROR = 1
_CONSTRUCTOR = re.compile(r"\s*(?:async\s+)?def\s+__(?:init|new)__\b")
_CLASS = re.compile(r"(\s*class\s+)([A-Za-z_]\w*)")
_DEF = re.compile(r"\s*(?:async\s+)?def\s")
_DIAGNOSTIC_CHARS = 160  # as a signature in the report: one line
# Longest wait for Pyrefly's indexing whatever the budget: its end is seen only on stderr, so a
# missing line must not hold a search with a huge budget (hand-set; saleor, 4,329 files, was
# indexed and answered 36 s after start at load ~25).
INDEXING_WAIT_S = 60.0


class Questions:
    """One search's questions to ``server``; files come from ``source`` (the search's corpus)."""

    def __init__(
        self, root: str, server: PyreflyServer, source: Callable[[str], SourceFile | None]
    ) -> None:
        self.root = root
        self.server = server
        self._source = source
        self._external: dict[str, list[str] | None] = {}  # files outside the root, read once

    def sync(self, asks: list[Ask]) -> dict[str, int]:
        versions: dict[str, int] = {}
        for ask in asks:
            source = ask.source
            if source is None or source.text is None or ask.finding.file in versions:
                continue
            try:
                path = str(Path(self.root) / ask.finding.file)
                versions[ask.finding.file] = self.server.sync(path, source.text, source.digest)
            except RpcError:
                break
        return versions

    def positions(self, asks: list[Ask], deadline: float) -> None:
        calls: list[tuple[str, Any]] = []
        slots: list[tuple[Ask, str]] = []
        for ask in asks:
            position = ask.position(self.root)
            if position is None:
                ask.problems.append("file unreadable")
                continue
            calls.append(("textDocument/hover", position))
            slots.append((ask, "hover"))
            if ask.finding.category != "definition":
                calls.append(("textDocument/definition", position))
                slots.append((ask, "definition"))
        assert self.server.conn is not None
        for (ask, kind), answer in zip(slots, self.server.conn.batch(calls, deadline), strict=True):
            if isinstance(answer, RpcError):
                ask.fail(kind, answer)
            elif kind == "hover":
                ask.type = hover_type(answer)
                ask.answered += 1
            else:
                ask.definition = self._definition(answer, ask)
                ask.answered += 1
        self._type_definitions([a for a, kind in slots if kind == "definition"], deadline)

    def _type_definitions(self, asks: list[Ask], deadline: float) -> None:
        """A callsite Pyrefly typed but did not resolve: its type definition, when that is a
        ``def`` of the called name, is where it is defined. Pyrefly 1.4.1 answers no
        definition for a method it typed from its bundled typeshed while the root holds the
        module's source (the stdlib as root: 10 of 10 ``Iterator.register(...)`` calls)."""
        wanted = [
            a
            for a in asks
            if a.definition is None
            and a.type is not None
            and a.finding.category == "callsite"
            and a.type.startswith(("def ", "async def "))
        ]
        if not wanted:
            return
        calls = [("textDocument/typeDefinition", a.position(self.root)) for a in wanted]
        assert self.server.conn is not None
        for ask, answer in zip(wanted, self.server.conn.batch(calls, deadline), strict=True):
            if isinstance(answer, RpcError):
                continue  # the definition answer stands (none); nothing was promised here
            name = ask.finding.text.rsplit(".", 1)[-1]
            for path, line0, units in sorted(locations(answer)):
                text = self._line(path, line0) or ""
                if _DEF.match(text) and identifier_at(text, char_col(text, units)) == name:
                    ask.definition = self._fact(path, line0, units, name)
                    break

    def references(self, asks: list[Ask], deadline: float) -> None:
        wanted = [a for a in asks if a.finding.category == "definition" and a.source is not None]
        if not wanted:
            return
        if not self.server.wait_indexed(min(deadline, time.monotonic() + INDEXING_WAIT_S)):
            for ask in wanted:
                ask.problems.append(f"references: indexing not finished {NOT_WITHIN_BUDGET}")
            return
        calls = []
        for ask in wanted:
            position = dict(ask.position(self.root) or {})
            position["context"] = {"includeDeclaration": False}
            calls.append(("textDocument/references", position))
        assert self.server.conn is not None
        for ask, answer in zip(wanted, self.server.conn.batch(calls, deadline), strict=True):
            if isinstance(answer, RpcError):
                ask.fail("references", answer)
                continue
            places = {
                (path, line, col)
                for path, line, col in locations(answer)
                if relative_to_root(path, self.root) is not None
            }
            ask.references = len(places)
            files = {relative_to_root(path, self.root) for path, _, _ in places}
            ask.referenced = tuple(sorted(f for f in files if f is not None))
            ask.answered += 1

    def diagnostics(self, asks: list[Ask], versions: dict[str, int], deadline: float) -> None:
        by_file: dict[str, list[Any] | None] = {}
        deadline = min(deadline, time.monotonic() + INDEXING_WAIT_S)
        for file, version in versions.items():
            by_file[file] = self.server.diagnostics(str(Path(self.root) / file), version, deadline)
        for ask in asks:
            published = by_file.get(ask.finding.file)
            if published is None:
                ask.problems.append(f"diagnostics: not published {NOT_WITHIN_BUDGET}")
                continue
            ask.diagnostics = tuple(
                _clip(f"{d.get('code', 'error')}: {' '.join(str(d.get('message', '')).split())}")
                for d in published
                if d.get("severity") == _DIAGNOSTIC_ERROR
                and (d.get("range") or {}).get("start", {}).get("line") == ask.finding.line - 1
            )

    def _definition(self, answer: Any, ask: Ask) -> SemanticDefinition | None:
        found = locations(answer)
        if not found:
            return None
        path, line0, units = min(found)  # several (overloads, stubs): the first in path order
        return self._fact(path, line0, units, ask.finding.text.rsplit(".", 1)[-1])

    def _fact(self, path: str, line0: int, units: int, name: str) -> SemanticDefinition:
        """``Client(...)`` resolves to ``def __init__``: the class it constructs is reported
        (the line cq calls the definition of ``Client``). Outside the root, a method is named
        with its class (``abc.ABCMeta.register``), so it can be matched with the root's own
        source of that module (``ranking.py``)."""
        text = self._line(path, line0) or ""
        owner = self._owner(path, line0)
        if owner is not None and not name.startswith("__") and _CONSTRUCTOR.match(text):
            above, col, cls = owner
            if cls == name:
                return definition_fact(path, above, col, self.root, self._line)
        return definition_fact(
            path, line0, units, self.root, self._line, owner=owner[2] if owner else None
        )

    def _owner(self, path: str, line0: int) -> tuple[int, int, str] | None:
        """(line, UTF-16 column, name) of the class whose body holds ``line0``: the first
        line above at a smaller indentation, when it is a ``class``."""
        text = self._line(path, line0) or ""
        indent = len(text) - len(text.lstrip())
        if indent == 0:
            return None
        for above in range(line0 - 1, -1, -1):
            line = self._line(path, above)
            if line is None:
                break
            stripped = line.lstrip()
            if (
                stripped
                and not stripped.startswith(("#", "@"))
                and len(line) - len(stripped) < indent
            ):
                found = _CLASS.match(line)
                return (above, utf16_col(line, found.start(2)), found.group(2)) if found else None
        return None

    def _line(self, path: str, line0: int) -> str | None:
        """Line ``line0`` of ``path``. Each file is split once: ``_owner`` walks up a class
        body line by line, and splitting the whole file at each step took 6.6 s of a
        background batch's 9 on moto (``get_bucket``, 30 hits, its ``S3Backend`` ~3,000 lines
        long)."""
        rel = relative_to_root(path, self.root)
        if rel is not None:
            source = self._source(rel)
            lines = source.lines() if source is not None else None
        else:
            if path not in self._external:
                try:
                    text = Path(path).read_text(encoding="utf-8", errors="replace")
                    self._external[path] = split_lines(text)
                except OSError:
                    self._external[path] = None
            lines = self._external[path]
        return lines[line0] if lines is not None and 0 <= line0 < len(lines) else None


class Ask:
    """What was asked and answered about one hit."""

    def __init__(self, finding: Finding, source: SourceFile | None) -> None:
        self.finding = finding
        self.source = source
        self.type: str | None = None
        self.definition: SemanticDefinition | None = None
        self.references: int | None = None
        self.referenced: tuple[str, ...] = ()  # the root's files holding those references
        self.diagnostics: tuple[str, ...] = ()
        self.problems: list[str] = []
        self.answered = 0

    def position(self, root: str) -> dict[str, Any] | None:
        lines = self.source.lines() if self.source is not None else None
        f = self.finding
        if lines is None or not 0 < f.line <= len(lines):
            return None
        line = lines[f.line - 1]
        col = f.col + (f.text.rfind(".") + 1)  # a dotted hit: its last name
        return {
            "textDocument": {"uri": (Path(root) / f.file).as_uri()},
            "position": {"line": f.line - 1, "character": utf16_col(line, col)},
        }

    def fail(self, kind: str, error: RpcError) -> None:
        self.problems.append(f"{kind}: {error}")

    def facts(self, still_coming: str | None = None) -> SemanticFacts:
        """The facts answered so far; ``still_coming``: what is yet to be asked (a first
        answer, ``asking.Batch.first``: ``degraded``, its reason says what it lacks)."""
        if self.answered == 0 and self.problems:
            status = "failed"
        else:
            status = "degraded" if self.problems or still_coming else "applied"
        problems = [*self.problems, *([still_coming] if still_coming else [])]
        return SemanticFacts(
            status=status,
            type=self.type,
            definition=self.definition,
            references=self.references,
            diagnostics=self.diagnostics,
            reason="; ".join(dict.fromkeys(problems)) or None,
        )


def _clip(text: str) -> str:
    return text if len(text) <= _DIAGNOSTIC_CHARS else text[: _DIAGNOSTIC_CHARS - 1] + "…"
