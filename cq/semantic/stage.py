"""The semantic stage of one search: ask Pyrefly about each shown Python hit, within a budget.

``SemanticRun.begin`` (right after rg, before classification) gets the root's server from
the pool, starting it when there is none, and opens the Python files with hits in the
background, so Pyrefly checks them while cq classifies. ``apply`` (after enrichment) sends,
all at once, a hover for every code hit, a definition request for every hit that is not
itself a definition, and, once Pyrefly has indexed the root, a references request for every
definition; then it reads the diagnostics published for the hits' files. Nothing waits
past ``budget_ms`` from the start of ``apply``.

Status per hit: ``applied`` when every answer came; ``degraded`` when some did not (the
reason says which: a request error, the time budget, references asked before indexing
ended — these are the only timing-dependent results, and they say so); ``failed`` when the
server is missing, dead or silent; ``skipped`` for hits that are not code (comments,
strings). Other stages' output never changes.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec

from cq.enrich import EnrichOutcome
from cq.model import (
    Finding,
    Pattern,
    RawMatch,
    SearchRequest,
    SemanticDefinition,
    SemanticFacts,
    StageStatus,
)
from cq.parse import Corpus, SourceFile
from cq.semantic.answers import definition_fact, hover_type, locations, relative_to_root, utf16_col
from cq.semantic.ranking import refine_order
from cq.semantic.rpc import RpcError
from cq.semantic.server import PyreflyServer, pool
from cq.semantic.settings import SemanticSettings, semantic_settings

CODE_CATEGORIES = frozenset(
    {"definition", "callsite", "import", "from_import", "reference", "assignment", "annotation"}
)
PREOPEN_FILES = 40  # files opened while classification runs: more than a 30-hit report spans
_DIAGNOSTIC_ERROR = 1
_CONSTRUCTOR = re.compile(r"\s*(?:async\s+)?def\s+__(?:init|new)__\b")
_CLASS = re.compile(r"(\s*class\s+)([A-Za-z_]\w*)")
_DIAGNOSTIC_CHARS = 160  # as a signature in the report: one line
# Longest wait for Pyrefly's indexing whatever the budget: its end is seen only on stderr, so a
# missing line must not hold a search with a huge budget (the stdlib root, site-packages
# included, reported indexed 3.4-3.7 s after start here).
INDEXING_WAIT_S = 60.0


class SemanticRun:
    """One search's use of the stage; ``active`` is False when it is off or has nothing to do."""

    def __init__(
        self,
        settings: SemanticSettings,
        root: str,
        server: PyreflyServer | None,
        active: bool,
        corpus: Corpus,
    ) -> None:
        self.settings = settings
        self.root = root
        self.corpus = corpus  # the search's files, read once for every stage
        self.server = server
        self.active = active
        self.telemetry: dict[str, dict[str, int]] = {}  # for ``Summary.telemetry``
        self._files: dict[str, SourceFile | None] = {}
        self._files_lock = threading.Lock()
        self._opener: threading.Thread | None = None
        self._external: dict[str, str | None] = {}  # files outside the root, read once

    @classmethod
    def begin(
        cls, request: SearchRequest, matches: tuple[RawMatch, ...], corpus: Corpus
    ) -> SemanticRun:
        """Start (or reuse) the root's server when the search has Python hits; files come
        from the search's ``corpus``."""
        settings = semantic_settings(request.profile, request.root, request.semantic)
        python = [m for m in matches if m.language == "python"]
        if not settings.enabled or not python:
            return cls(settings, request.root, None, active=False, corpus=corpus)
        server = pool().get(request.root)
        run = cls(settings, request.root, server, active=True, corpus=corpus)
        if server is not None:
            files = list(dict.fromkeys(m.file for m in python))[:PREOPEN_FILES]
            run._opener = threading.Thread(
                target=run._preopen, args=(files,), name="cq-lsp-open", daemon=True
            )
            run._opener.start()
        return run

    def apply(self, enriched: EnrichOutcome, limit: int) -> EnrichOutcome:
        """The findings with ``enrichment.semantic`` set on the shown Python ones, and the
        stage's status counts in the telemetry; unchanged when the stage is not active."""
        if not self.active:
            return enriched
        findings = enriched.findings
        deadline = time.monotonic() + self.settings.budget_ms / 1000
        shown = len(findings) if limit <= 0 else min(limit, len(findings))
        targets = [i for i in range(shown) if findings[i].language == "python"]
        facts = self._facts([findings[i] for i in targets], deadline)
        out = list(findings)
        for index, fact in zip(targets, facts, strict=True):
            out[index] = _with_semantic(findings[index], fact)
        counts = Counter(f.status for f in facts)
        self.telemetry["semantic"] = dict(sorted(counts.items()))
        return msgspec.structs.replace(enriched, findings=out)

    def rerank(
        self, ranked: list[Finding], patterns: tuple[Pattern, ...], request: SearchRequest
    ) -> list[Finding]:
        """Within the shown prefix, hits resolved to the queried definition first
        (``ranking.refine_order``); unchanged when the stage is not active."""
        if not self.active:
            return ranked
        cut = len(ranked) if request.limit <= 0 else min(request.limit, len(ranked))
        shown, counts = refine_order(ranked[:cut], patterns, request.query)
        if counts:
            self.telemetry["semantic.target"] = counts
        return shown + ranked[cut:]

    # -- the work --------------------------------------------------------------------------

    def _facts(self, hits: list[Finding], deadline: float) -> list[SemanticFacts]:
        code = [f.category in CODE_CATEGORIES for f in hits]
        skipped = SemanticFacts(status="skipped", reason="not code")
        server = self.server
        failure = self._unavailable(server, deadline)
        if failure is not None or server is None:
            failed = SemanticFacts(status="failed", reason=failure or "pyrefly not installed")
            return [failed if is_code else skipped for is_code in code]
        asks = [
            _Ask(f, self._source(f.file)) for f, is_code in zip(hits, code, strict=True) if is_code
        ]
        if self._opener is not None:  # its didOpens would cancel requests sent meanwhile
            self._opener.join(max(deadline - time.monotonic(), 0.0))
        versions = self._sync(server, asks)
        self._ask_positions(server, asks, deadline)
        self._ask_references(server, asks, deadline)
        self._read_diagnostics(server, asks, versions, deadline)
        answers = iter(asks)
        return [next(answers).facts() if is_code else skipped for is_code in code]

    def _unavailable(self, server: PyreflyServer | None, deadline: float) -> str | None:
        if server is None:
            return "pyrefly not installed"
        if not server.initialized.wait(max(deadline - time.monotonic(), 0.0)):
            return "server not ready within the time budget"
        if server.error:
            return server.error
        if not server.alive():
            return "server exited" + (f": {server.stderr_tail()}" if server.stderr_tail() else "")
        return None

    def _preopen(self, files: list[str]) -> None:
        server = self.server
        if server is None or not server.initialized.wait(10.0) or server.error:
            return
        for rel in files:
            source = self._source(rel)
            if source is not None and source.text is not None and server.alive():
                try:
                    server.sync(str(Path(self.root) / rel), source.text, source.digest)
                except (RpcError, AssertionError):
                    return

    def _sync(self, server: PyreflyServer, asks: list[_Ask]) -> dict[str, int]:
        versions: dict[str, int] = {}
        for ask in asks:
            source = ask.source
            if source is None or source.text is None or ask.finding.file in versions:
                continue
            try:
                path = str(Path(self.root) / ask.finding.file)
                versions[ask.finding.file] = server.sync(path, source.text, source.digest)
            except RpcError:
                break
        return versions

    def _ask_positions(self, server: PyreflyServer, asks: list[_Ask], deadline: float) -> None:
        calls: list[tuple[str, Any]] = []
        slots: list[tuple[_Ask, str]] = []
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
        assert server.conn is not None
        for (ask, kind), answer in zip(slots, server.conn.batch(calls, deadline), strict=True):
            if isinstance(answer, RpcError):
                ask.fail(kind, answer)
            elif kind == "hover":
                ask.type = hover_type(answer)
                ask.answered += 1
            else:
                ask.definition = self._definition(answer, ask)
                ask.answered += 1

    def _ask_references(self, server: PyreflyServer, asks: list[_Ask], deadline: float) -> None:
        wanted = [a for a in asks if a.finding.category == "definition" and a.source is not None]
        if not wanted:
            return
        if not server.wait_indexed(min(deadline, time.monotonic() + INDEXING_WAIT_S)):
            for ask in wanted:
                ask.problems.append("references: indexing not finished within the time budget")
            return
        calls = []
        for ask in wanted:
            position = dict(ask.position(self.root) or {})
            position["context"] = {"includeDeclaration": False}
            calls.append(("textDocument/references", position))
        assert server.conn is not None
        for ask, answer in zip(wanted, server.conn.batch(calls, deadline), strict=True):
            if isinstance(answer, RpcError):
                ask.fail("references", answer)
                continue
            places = {
                (path, line, col)
                for path, line, col in locations(answer)
                if relative_to_root(path, self.root) is not None
            }
            ask.references = len(places)
            ask.answered += 1

    def _read_diagnostics(
        self, server: PyreflyServer, asks: list[_Ask], versions: dict[str, int], deadline: float
    ) -> None:
        by_file: dict[str, list[Any] | None] = {}
        deadline = min(deadline, time.monotonic() + INDEXING_WAIT_S)
        for file, version in versions.items():
            by_file[file] = server.diagnostics(str(Path(self.root) / file), version, deadline)
        for ask in asks:
            published = by_file.get(ask.finding.file)
            if published is None:
                ask.problems.append("diagnostics: not published within the time budget")
                continue
            ask.diagnostics = tuple(
                _clip(f"{d.get('code', 'error')}: {' '.join(str(d.get('message', '')).split())}")
                for d in published
                if d.get("severity") == _DIAGNOSTIC_ERROR
                and (d.get("range") or {}).get("start", {}).get("line") == ask.finding.line - 1
            )

    def _definition(self, answer: Any, ask: _Ask) -> SemanticDefinition | None:
        found = locations(answer)
        if not found:
            return None
        path, line0, units = min(found)  # several (overloads, stubs): the first in path order
        name = ask.finding.text.rsplit(".", 1)[-1]
        line0, units = self._class_of_constructor(path, line0, units, name)
        return definition_fact(path, line0, units, self.root, self._line)

    def _class_of_constructor(
        self, path: str, line0: int, units: int, name: str
    ) -> tuple[int, int]:
        """``Client(...)`` resolves to ``def __init__``: report the class it constructs (the
        line cq calls the definition of ``Client``), found upward at a smaller indentation."""
        text = self._line(path, line0) or ""
        if name.startswith("__") or not _CONSTRUCTOR.match(text):
            return line0, units
        indent = len(text) - len(text.lstrip())
        for above in range(line0 - 1, -1, -1):
            line = self._line(path, above)
            if line is None:
                break
            stripped = line.lstrip()
            if stripped and len(line) - len(stripped) < indent:
                found = _CLASS.match(line)
                if found and found.group(2) == name:
                    return above, utf16_col(line, found.start(2))
                break
        return line0, units

    def _source(self, rel: str) -> SourceFile | None:
        with self._files_lock:
            if rel not in self._files:
                self._files[rel] = self.corpus.source(rel, "python")
            return self._files[rel]

    def _line(self, path: str, line0: int) -> str | None:
        rel = relative_to_root(path, self.root)
        if rel is not None:
            source = self._source(rel)
            text = source.text if source is not None else None
        else:
            if path not in self._external:
                try:
                    self._external[path] = Path(path).read_text(encoding="utf-8", errors="replace")
                except OSError:
                    self._external[path] = None
            text = self._external[path]
        lines = (text or "").split("\n")
        return lines[line0].removesuffix("\r") if 0 <= line0 < len(lines) else None


class _Ask:
    """What was asked and answered about one hit."""

    def __init__(self, finding: Finding, source: SourceFile | None) -> None:
        self.finding = finding
        self.source = source
        self.type: str | None = None
        self.definition: SemanticDefinition | None = None
        self.references: int | None = None
        self.diagnostics: tuple[str, ...] = ()
        self.problems: list[str] = []
        self.answered = 0

    def position(self, root: str) -> dict[str, Any] | None:
        source = self.source
        if source is None or source.text is None:
            return None
        lines = source.text.split("\n")
        f = self.finding
        if not 0 < f.line <= len(lines):
            return None
        line = lines[f.line - 1].removesuffix("\r")
        col = f.col + (f.text.rfind(".") + 1)  # a dotted hit: its last name
        return {
            "textDocument": {"uri": (Path(root) / f.file).as_uri()},
            "position": {"line": f.line - 1, "character": utf16_col(line, col)},
        }

    def fail(self, kind: str, error: RpcError) -> None:
        self.problems.append(f"{kind}: {error}")

    def facts(self) -> SemanticFacts:
        if self.answered == 0 and self.problems:
            status = "failed"
        else:
            status = "degraded" if self.problems else "applied"
        return SemanticFacts(
            status=status,
            type=self.type,
            definition=self.definition,
            references=self.references,
            diagnostics=self.diagnostics,
            reason="; ".join(dict.fromkeys(self.problems)) or None,
        )


def _clip(text: str) -> str:
    return text if len(text) <= _DIAGNOSTIC_CHARS else text[: _DIAGNOSTIC_CHARS - 1] + "…"


def _with_semantic(finding: Finding, facts: SemanticFacts) -> Finding:
    enrichment = finding.enrichment
    if enrichment is None:
        return finding
    stages = enrichment.stages or StageStatus()
    return msgspec.structs.replace(
        finding,
        enrichment=msgspec.structs.replace(
            enrichment,
            semantic=facts,
            stages=msgspec.structs.replace(stages, semantic=facts.status),
        ),
    )
