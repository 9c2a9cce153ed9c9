"""Put the index's evidence into a rewritten search's findings and Relevant Functions.

In: rg's ranked findings and the index's hits. Out: the findings in the fused file order (up
to ``index.per_file`` findings of each file in that order, then the rest as they were), a file the
index alone found represented by its best unit's definition line, and the best units as
Relevant Functions. Rank order inside a file is rg's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

import msgspec

from cq.index.coverage import UnitReader
from cq.index.dense import dense_listed, with_dense
from cq.index.evidence import Evidence
from cq.index.function_signals import (
    INNERMOST_FRAME,
    Asked,
    Candidate,
    frame,
    names_container,
)
from cq.index.functions import Ranked, asked, best_answer, rerank_units
from cq.index.fuse import FileVote, UnitVote, fusion_name
from cq.index.order import fused_order, sizes_of
from cq.index.query import IndexHit, IndexHits
from cq.index.scopes import rg_scope_key
from cq.index.words import split_words
from cq.model import Finding, Question, RelevantFunction, ScoreBreakdown
from cq.model.dense import DenseRanker
from cq.model.language import is_rust
from cq.model.tuning import Tuning
from cq.parse import Corpus, split_lines
from cq.rank import abstract_lines, last_name, path_role

if TYPE_CHECKING:
    from cq.index.units import Unit


def fuse_findings(
    corpus: Corpus,
    ranked: list[Finding],
    evidence: Evidence,
    explain: bool,
    tuning: Tuning,
    *,
    question: Question,
    tests_wanted: bool = False,
    dense: DenseRanker | None = None,
) -> tuple[list[Finding], tuple[RelevantFunction, ...], tuple[str, int] | None]:
    """The findings in fused order, the Relevant Functions and where the Answer's candidate is
    defined among the findings (``IndexFusion.answer_at``) (``tests_wanted``: the search's
    focus is tests, so test files keep their fused rank), the fused units reordered by what
    the ``question`` says (``functions.rerank_units``). ``tuning.index`` holds the
    fusion's numbers, ``tuning.rank.role`` the role multipliers it demotes by; ``dense``
    (the optional dense signal, ``cq/embed``) ranks the first files and their units."""
    numbers, roles = tuning.index, tuning.rank.role
    rg_files = list(dict.fromkeys(f.file for f in ranked))
    scopes = [
        (f.file, rg_scope_key(f.file, f.containing_scope)) for f in ranked if f.containing_scope
    ]
    hits, lines = evidence.hits, _Lines(corpus)
    sizes = sizes_of(evidence.manifest, rg_files, hits)
    signals = asked(question, evidence.words)
    order = fused_order(
        rg_files,
        scopes,
        hits,
        evidence.words,
        sizes,
        lines.reader,
        numbers,
        roles,
        tests_wanted=tests_wanted,
        named=partial(names_container, question=signals),
    )
    ranks = dense([v.file for v in order.files[: tuning.embed.files]]) if dense else None
    if ranks is not None:
        order = with_dense(order, ranks, tuning.embed)
    votes, weights = order.files, fusion_name(order.fusion, numbers)
    by_file: dict[str, list[Finding]] = {}
    for f in ranked:
        by_file.setdefault(f.file, []).append(f)
    best_unit: dict[str, IndexHit] = {}
    for hit in (*evidence.hits.units, *_defining_units(evidence.hits), *evidence.hits.files):
        best_unit.setdefault(hit.path, hit)
    head: list[Finding] = []
    placed: set[int] = set()
    for vote in votes:
        own = by_file.get(vote.file)
        if own:
            for f in own[: numbers.per_file]:
                placed.add(id(f))
                head.append(_explained(f, vote, weights) if explain else f)
        else:
            hit = best_unit.get(vote.file) or IndexHit(path=vote.file, kind="file")
            if hit.kind in ("file", "module"):
                hit = _best_line(hit, lines, evidence.words)
            confidence = numbers.index_only_confidence
            synthetic = _definition(hit, lines, vote, weights if explain else "", confidence)
            if synthetic is not None:
                head.append(synthetic)
    vote_of = {v.file: v for v in votes}
    tail = [
        _explained(f, vote_of[f.file], weights) if explain else f
        for f in ranked
        if id(f) not in placed
    ]
    units = _pool(order.units, numbers.function_pool, signals)
    file_order = [v.file for v in votes]

    def reranked(
        units: list[tuple[UnitVote, list[UnitVote]]],
        read: Callable[[UnitVote], frozenset[str] | None] = lines.reader.words,
        head: Callable[[UnitVote], frozenset[str] | None] = lines.reader.head,
        code: Callable[[UnitVote], frozenset[str] | None] = lines.reader.code,
    ) -> list[Ranked]:
        return rerank_units(
            units,
            ranked,
            file_order,
            signals,
            read,
            lines.reader.lines,
            numbers.signals,
            tests_wanted=tests_wanted,
            head=head,
            setter=lines.reader.setter,
            code=code,
        )

    pool = reranked(units)
    best = best_answer([r.scored for r in pool])  # the Answer's candidate (cq.assemble picks)
    answer = next((r.vote for r in pool if r.scored is best), None)
    overrides = _overrides(answer, lines) if answer is not None and signals.behaviour else []
    if answer is not None and overrides:  # a base's declaration: its overrides answer
        pool = reranked(
            _with_namesakes(units, answer, overrides),
            _inheriting(lines.reader.words, answer, overrides),
            _inheriting(lines.reader.head, answer, overrides),
            _inheriting(lines.reader.code, answer, overrides),
        )
        best = best_answer([r.scored for r in pool if r.vote != answer])
        answer = next((r.vote for r in pool if r.scored is best), answer)
    if ranks is not None:  # the embeddings' order fused into the final one, as measured
        pool = dense_listed(pool, ranks, tuning.embed)
    units = _listed(pool, numbers.functions, answer)
    first = answer
    if first is not None and not first.line and (found := lines.unit(first.file, first.qualname)):
        first = msgspec.structs.replace(first, line=found[0], kind=found[1])  # rg's scope alone
    answer_at = None
    if first is not None and first.line:
        vote = vote_of.get(first.file)
        explained = weights if explain else ""
        confidence = numbers.index_only_confidence
        head, tail = _lead_with(first, head, tail, lines, vote, explained, confidence)
        answer_at = (first.file, first.line)
    return head + tail, tuple(_function(u, ranked, lines) for u in units), answer_at


def _pool(
    units: Sequence[tuple[UnitVote, list[UnitVote]]], size: int, question: Asked
) -> list[tuple[UnitVote, list[UnitVote]]]:
    """The first ``size`` fused units, and the traceback's innermost frame in the tree when
    the fusion placed it further down (``_listed`` keeps it listed)."""
    pool = list(units[:size])
    if not question.frames:
        return pool
    for unit in units[size:]:
        vote = unit[0]
        candidate = Candidate(file=vote.file, qualname=vote.qualname, fused=vote.fused)
        if frame(candidate, last_name(vote.qualname), question) >= INNERMOST_FRAME:
            return [*pool, unit]
    return pool


def _overrides(answer: UnitVote, lines: _Lines) -> list[UnitVote]:
    """When the Answer's candidate only declares a method (``abstract_lines``: ``raise
    NotImplementedError``, ``pass``, ``...``), the methods of its file that implement that
    name (its subclasses' overrides), each at its fused score: a how-question asks what code
    does, and a declaration does nothing. "how is a quantile computed from forecast samples"
    was answered by ``Forecast.quantile``, whose body raises, not ``SampleForecast.quantile``
    beside it, which computes it (bench/data/everyday.jsonl, gluonts-10). Python only."""
    if is_rust(answer.file):
        return []
    found = lines.unit(answer.file, answer.qualname)
    declared = abstract_lines("\n".join(lines.all(answer.file))) if found is not None else None
    if found is None or not declared or found[0] not in declared:
        return []
    name = last_name(answer.qualname)
    return [
        UnitVote(
            file=answer.file, qualname=u.qualname, line=u.line, kind=u.kind, fused=answer.fused
        )
        for u in lines.units_of(answer.file)
        if u.qualname != answer.qualname
        and last_name(u.qualname) == name
        and u.kind == "function"
        and u.line not in declared
    ]


def _inheriting(
    read: Callable[[UnitVote], frozenset[str] | None],
    declared: UnitVote,
    overrides: list[UnitVote],
) -> Callable[[UnitVote], frozenset[str] | None]:
    """``read`` with each override's words joined by its declaration's: what the base's
    docstring says the method does is what every override does (Python's ``inspect.getdoc``
    gives an override without a docstring its base's), and an override rarely says it
    again."""
    heirs = {(v.file, v.qualname) for v in overrides}

    def words(v: UnitVote) -> frozenset[str] | None:
        own = read(v)
        if (v.file, v.qualname) not in heirs:
            return own
        return (own or frozenset()) | (read(declared) or frozenset())

    return words


def _with_namesakes(
    units: list[tuple[UnitVote, list[UnitVote]]], answer: UnitVote, more: list[UnitVote]
) -> list[tuple[UnitVote, list[UnitVote]]]:
    """``units`` with ``more`` among the namesakes of the entry holding ``answer``, those it
    holds already left out."""
    out = []
    for vote, namesakes in units:
        if answer == vote or answer in namesakes:
            held = {(v.file, v.qualname) for v in (vote, *namesakes)}
            namesakes = [*namesakes, *(m for m in more if (m.file, m.qualname) not in held)]
        out.append((vote, namesakes))
    return out


def _listed(pool: list[Ranked], most: int, answer: UnitVote | None) -> list[Ranked]:
    """The first ``most`` of the pool (best first), with two kept whatever their score, each
    in the place of the last: the Answer's candidate (``answer``: the report's Answer is read
    from the listed functions), and the traceback's innermost frame in the tree: where the
    error was raised is always worth reading, however little of the question's words it
    holds. Those kept stay in their score's order, so the list's scores are sorted."""
    innermost = next((i for i, r in enumerate(pool) if _is_innermost(r)), None)
    own = None if answer is None else (answer.file, answer.qualname)
    chosen = next((i for i, r in enumerate(pool) if (r.vote.file, r.vote.qualname) == own), None)
    wanted = {i for i in (chosen, innermost) if i is not None and i >= most}
    if not wanted:
        return pool[:most]
    return [pool[i] for i in sorted({*range(max(0, most - len(wanted))), *wanted})]


def _is_innermost(r: Ranked) -> bool:
    return r.scored.signals.get("frame", 0.0) >= INNERMOST_FRAME


def _lead_with(
    unit: UnitVote,
    head: list[Finding],
    tail: list[Finding],
    lines: _Lines,
    vote: FileVote | None,
    explain: str,
    confidence: float,
) -> tuple[list[Finding], list[Finding]]:
    """The Answer's candidate's definition line first among its file's findings, so the
    report's Answer can be it (``cq/assemble/result.py``): rg's finding of that line if
    rg had one, else one made from the index's unit. Its file's place does not move."""
    at = next((i for i, f in enumerate(head) if f.file == unit.file), None)
    if at is None or vote is None:
        return head, tail
    found = next((f for f in head if _defines(f, unit)), None)
    if found is not None:
        kept = [f for f in head if f is not found]
        return [*kept[:at], found, *kept[at:]], tail
    moved = next((f for f in tail if _defines(f, unit)), None)
    if moved is None:
        hit = IndexHit(path=unit.file, kind=unit.kind, qualname=unit.qualname, line=unit.line)
        moved = _definition(hit, lines, vote, explain, confidence)
        if moved is None or moved.category != "definition":
            return head, tail
    return [*head[:at], moved, *head[at:]], [f for f in tail if f is not moved]


def _defines(f: Finding, unit: UnitVote) -> bool:
    return f.file == unit.file and f.line == unit.line and f.category == "definition"


def _defining_units(hits: IndexHits) -> list[IndexHit]:
    """The defining unit of each file found by a definition the text names."""
    return [
        IndexHit(path=m.path, kind=u.kind, qualname=u.qualname, line=u.line)
        for m in hits.defined
        if (u := m.unit) is not None
    ]


def _explained(f: Finding, vote: FileVote, weights: str) -> Finding:
    """``f`` with its file's place in the fused order and the tuned ``weights`` behind it."""
    b = f.explain or ScoreBreakdown()
    b = msgspec.structs.replace(
        b,
        file_rank_rg=vote.rank_rg,
        file_rank_index=vote.rank_index,
        file_fused=vote.fused,
        file_fusion=weights,
    )
    if vote.rank_named or vote.rank_defined:
        b = msgspec.structs.replace(
            b, file_rank_named=vote.rank_named, file_rank_defined=vote.rank_defined
        )
    return msgspec.structs.replace(f, explain=b)


def _best_line(hit: IndexHit, lines: _Lines, words: dict[str, float]) -> IndexHit:
    """A module-level hit (settings, constants) at the line saying the most query words."""
    content = lines.all(hit.path)
    best, best_score = hit.line, 0.0
    for number, text in enumerate(content, 1):
        if text.startswith((" ", "\t")) or not text.strip() or text.startswith("#"):
            continue
        score = sum(words.get(w, 0.0) for w in set(split_words(text).split()))
        if score > best_score:
            best, best_score = number, score
    return msgspec.structs.replace(hit, line=best, kind="module")


def _definition(
    hit: IndexHit, lines: _Lines, vote: FileVote, explain: str, confidence: float
) -> Finding | None:
    """A finding for a file only the index found: its best unit's definition line (the
    index says the unit is relevant, not that it is the queried name: ``confidence``);
    ``explain``: the fusion's weights, when the search explains (else empty)."""
    text = lines.get(hit.path, hit.line)
    if text is None:
        return None
    name = "" if hit.kind == "module" else hit.qualname.replace("::", ".").rsplit(".", 1)[-1]
    shown = name if name and name in text else text.strip()[:80]
    col = text.find(shown)  # 0-based, as rg's: ``line_text[col:end_col] == text``
    dotted = "" if hit.kind == "module" else hit.qualname.replace("::", ".")
    # A definition's scope is the unit itself, as rg's hits read it (Top Contexts name the
    # function); a line the unit's name is not on sits in the unit's container.
    scope = dotted if name and name in text else dotted.rpartition(".")[0]
    finding = Finding(
        file=hit.path,
        line=hit.line,
        col=col,
        end_col=col + len(shown),
        text=shown,
        line_text=text,
        language="rust" if is_rust(hit.path) else "python",
        category="definition" if shown == name else "assignment" if "=" in text else "text_match",
        confidence=confidence,
        tier="index",
        node_kind=hit.kind,
        containing_scope=_native_scope(hit.path, scope) or None,
        role=path_role(hit.path),
    )
    return _explained(finding, vote, explain) if explain else finding


def _native_scope(path: str, dotted: str) -> str:
    return dotted.replace(".", "::") if is_rust(path) else dotted


def _function(placed: Ranked, ranked: list[Finding], lines: _Lines) -> RelevantFunction:
    """A Relevant Function at its definition line, with its header on one line: an rg
    scope's unit is looked up in its file (the index's scanner, ``units.py``); one the
    scanner does not list (a function nested in a function) by its ``def``/``fn`` line above
    its first finding; else it stays at that finding, without a signature. ``namesakes``
    (same file, same last name, ranked lower) are listed by their lines; its score and
    evidence are the rerank's."""
    u, namesakes = placed.vote, placed.namesakes
    line, kind = u.line, u.kind
    if not line:
        line, kind = lines.unit(u.file, u.qualname) or (0, "")
    if not line:
        first = next(
            (
                f.line
                for f in ranked
                if f.file == u.file
                and f.containing_scope
                and rg_scope_key(f.file, f.containing_scope) == u.qualname
            ),
            1,
        )
        line = lines.header_above(u.file, first, last_name(u.qualname))
        kind = "function" if line else ""
        line = line or first
    signature = lines.header(u.file, line) if kind else ""
    signals = tuple(s for s, r in (("index", u.rank_index), ("rg", u.rank_rg)) if r)
    return RelevantFunction(
        name=f"{u.file}::{u.qualname}",
        file=u.file,
        line=line,
        kind=kind or "scope",
        score=placed.scored.score,
        answer_score=placed.scored.answer if placed.scored.signals else None,
        signature=signature,
        signals=signals,
        namesakes=tuple(_line_of(n, lines) for n in namesakes),
        evidence=placed.scored.evidence,
        scores=placed.scored.signals,
    )


def _line_of(u: UnitVote, lines: _Lines) -> int:
    """A unit's definition line: the index's, else its file's scan (0: not found there)."""
    return u.line or (lines.unit(u.file, u.qualname) or (0, ""))[0]


# hand-set: one parameter a line, a 30-parameter header still fits; a longer one is cut
_HEADER_LINES = 40
_HEADER_SEARCH = 400  # hand-set: lines searched upwards for a nested function's def


class _Lines:
    """Lines of files, from the search's corpus (each file read once per search)."""

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.files: dict[str, list[str] | None] = {}
        self.units: dict[str, dict[str, Unit]] = {}
        self.reader = UnitReader(self._scanned)

    def unit(self, path: str, qualname: str) -> tuple[int, str] | None:
        """The definition line and kind of the file's unit ``qualname``."""
        u = self._scanned(path).get(qualname)
        return (u.line, u.kind) if u is not None else None

    def units_of(self, path: str) -> list[Unit]:
        """The file's units (the first of each qualified name), in source order."""
        return list(self._scanned(path).values())

    def _scanned(self, path: str) -> dict[str, Unit]:
        """The file's units by qualified name (``cq.index.units``, scanned once)."""
        if path not in self.units:
            from cq.index.units import file_units

            language = "rust" if is_rust(path) else "python"
            text = "\n".join(self.all(path))
            found: dict[str, Unit] = {}
            for u in file_units(text, language) if text else ():
                found.setdefault(u.qualname, u)
            self.units[path] = found
        return self.units[path]

    def all(self, path: str) -> list[str]:
        self.get(path, 1)
        return self.files.get(path) or []

    def header_above(self, path: str, line: int, name: str) -> int:
        """The nearest ``def name``/``fn name`` line at or above ``line`` (within
        ``_HEADER_SEARCH`` lines), 0 when there is none."""
        rust = is_rust(path)
        head = re.compile(
            rf"\bfn\s+{re.escape(name)}\b"
            if rust
            else rf"^\s*(?:async\s+)?def\s+{re.escape(name)}\b"
        )
        content = self.all(path)
        for number in range(min(line, len(content)), max(0, line - _HEADER_SEARCH), -1):
            if head.search(content[number - 1]):
                return number
        return 0

    def header(self, path: str, line: int) -> str:
        """The def/fn header starting at ``line``, on one line (``one_line_header``)."""
        from cq.parse.one_line import one_line_header

        language = "rust" if is_rust(path) else "python"
        return one_line_header(self.all(path)[line - 1 : line - 1 + _HEADER_LINES], language)

    def get(self, path: str, line: int) -> str | None:
        if path not in self.files:
            language = "rust" if is_rust(path) else "python"
            source = self.corpus.source(path, language)
            lines = source.lines() if source is not None else None
            if lines is None and source is not None:  # not UTF-8: as the index read it
                lines = split_lines(source.data.decode("utf-8", errors="replace"))
            self.files[path] = lines
        content = self.files[path]
        if not content or not 1 <= line <= len(content):
            return None
        return content[line - 1]
