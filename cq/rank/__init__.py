"""Ranking: score findings and order them best first.

In: classified findings, a ``RankContext`` (patterns, focus, weights) and the search's
``Corpus``. Out: ``Ranked``: every finding with ``role`` and ``score`` set (and ``explain``
when asked), the report's limit of them picked to show. ``final_order`` runs once, after
enrichment moved the shown findings' confidence: score descending, ties broken by
(file, line, col). Open ``score.py`` for the formula; ``roles.py``
(path conventions) and ``rust_tests.py`` (``#[cfg(test)]`` items) decide the item role,
``signals.py`` holds the query-aware boosts, ``terms.py`` the multi-pattern signal,
``dotted.py`` a dotted query's target definition and plausible uses, ``stubs.py`` the
``@overload`` and ``...``-bodied definitions an Answer passes over for the implementation,
``suggest.py`` the defined names nearest a name that matched nothing ("did you mean").
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

import msgspec

from cq.model import Finding, Focus, Pattern, RankWeights, Role, ScoreBreakdown, Tally
from cq.parse import Corpus
from cq.rank.dotted import (
    Dotted,
    dotted_factor,
    dotted_query,
    is_other_owners_use,
    is_plausible_use,
    is_target_definition,
    last_name,
)
from cq.rank.questions import (
    UseQuestion,
    called_names,
    is_asked_definition,
    is_use_site,
    use_order,
    use_question,
    with_importers,
)
from cq.rank.roles import path_role
from cq.rank.rust_tests import cfg_test_ranges, declared_under_cfg_test, in_ranges
from cq.rank.score import breakdown, depth_penalty, total
from cq.rank.signals import (
    cuts_name,
    exact_definition,
    filename_match,
    is_exact_definition,
    nesting_depth,
    queried_names,
)
from cq.rank.stubs import abstract_lines, stub_definitions
from cq.rank.suggest import files_named, suggest_names
from cq.rank.terms import file_coverage, file_evidence, is_rewritten, terms_multiplier


class RankContext(msgspec.Struct, frozen=True, kw_only=True):
    """What the score needs besides the findings themselves."""

    patterns: tuple[Pattern, ...]
    focus: Focus = "all"
    weights: RankWeights = msgspec.field(default_factory=RankWeights)
    explain: bool = False
    path_hints: dict[str, float] = {}  # files a rewritten query's text points at, by weight
    use_cache: bool = True  # read and fill cq's cache (Rust ``#[cfg(test)]`` ranges)
    called: frozenset[str] = frozenset()  # a callers question's function (``called_names``)
    used: UseQuestion | None = None  # a usage question's name and uses (``use_question``)


class Ranked(msgspec.Struct, frozen=True):
    """Scored findings: the ``shown`` ones (best first, the report's limit of them) with
    their score breakdowns; of the rest only what the report counts (``tally``, whose file
    order lists the rest's files only), and the rest themselves, scored and in order, only
    when asked (``keep_rest``: the index may reorder every finding of a rewritten query)."""

    shown: list[Finding]
    parts: list[ScoreBreakdown]
    tally: Tally
    rest: list[Finding] = []


def score_findings(
    findings: list[Finding], ctx: RankContext, corpus: Corpus, limit: int, keep_rest: bool = False
) -> Ranked:
    """Score every finding and pick the best ``limit`` (all when 0) to show; the others are
    scored and counted, never copied."""
    scorer = _Scorer(ctx, _file_signal(findings, ctx))
    roles = _Roles(corpus, findings, ctx.use_cache)
    role_of = [roles.of(f) for f in findings]
    scores = [scorer.score(f, role) for f, role in zip(findings, role_of, strict=True)]

    # A callers question shows its function's definitions and calls first, whatever their
    # file's evidence: a partition, as resolution is (``cq/semantic/ranking.py``).
    dotted = dotted_query(ctx.patterns)
    leads = [_is_lead(f, ctx.called, dotted) for f in findings] if ctx.called else None

    # A usage question shows the uses it asks for first (``use_order``), as a callers
    # question its calls: the Answer is read from the shown findings.
    used = (
        [use_order(f, ctx.used, r) for f, r in zip(findings, role_of, strict=True)]
        if ctx.used is not None
        else None
    )

    def key(i: int) -> tuple[bool, tuple[bool, ...], float, str, int, int]:
        f = findings[i]
        first = used[i] if used is not None else ()
        return (leads is not None and not leads[i], first, -scores[i], f.file, f.line, f.col)

    count = len(findings) if limit <= 0 else min(limit, len(findings))
    best = heapq.nsmallest(count, range(len(findings)), key=key)
    if ctx.used is not None:
        best = _asked_definition(best, findings, ctx.used)
    chosen = set(best)
    rest = sorted((i for i in range(len(findings)) if i not in chosen), key=key)
    parts = [scorer.breakdown(findings[i], role_of[i]) for i in best]
    shown = [
        msgspec.structs.replace(
            findings[i], role=role_of[i], score=scores[i], explain=b if ctx.explain else None
        )
        for i, b in zip(best, parts, strict=True)
    ]
    tally = Tally(
        total=len(findings),
        categories=dict(Counter(f.category for f in findings)),
        roles=dict(Counter(role_of)),
        files=dict(Counter(f.file for f in findings)),
        files_in_rank_order=tuple(dict.fromkeys(findings[i].file for i in rest)),
        calls=tuple(
            msgspec.structs.replace(findings[i], role=role_of[i], score=scores[i])
            for i in rest
            if _asked_call(findings[i], ctx.called)
        ),
        uses=sum(1 for u in used if not u[0]) if used is not None else 0,
        importers=ctx.used.importers if ctx.used is not None else frozenset(),
    )
    kept = [
        msgspec.structs.replace(
            findings[i],
            role=role_of[i],
            score=scores[i],
            explain=scorer.breakdown(findings[i], role_of[i]) if ctx.explain else None,
        )
        for i in (rest if keep_rest else ())
    ]
    return Ranked(shown=shown, parts=parts, tally=tally, rest=kept)


def _asked_definition(best: list[int], findings: list[Finding], asked: UseQuestion) -> list[int]:
    """A usage question's shown findings and, when its uses filled them, the one definition
    of the name it asks about (none when several may be it: ``pyro.sample`` has namesakes
    under ``pyro``), which ``final_order`` keeps in the place of the last: the Answer says
    where the name is defined only from the shown findings (``cq.assemble``), as a callers
    question's does."""
    if len(best) < 2 or len(best) == len(findings):  # a use must keep the first place
        return best
    if any(is_asked_definition(findings[i], asked) for i in best):
        return best
    targets = [i for i, f in enumerate(findings) if is_asked_definition(f, asked)]
    return [*best, targets[0]] if len(targets) == 1 else best


class Reordered(Protocol):
    """What a whole-list reorder gives back (the index's fusion, ``cq.index.IndexFusion``):
    every finding in its new order, and whatever else it learned."""

    @property
    def findings(self) -> list[Finding]: ...

    @property
    def answer_at(self) -> tuple[str, int] | None: ...


R = TypeVar("R", bound=Reordered)


class Ordered(msgspec.Struct, Generic[R], frozen=True):
    """The report's findings in their final order, the tally over every finding (its file
    order follows the final one), and what the fusion gave back when it ran."""

    findings: list[Finding]
    tally: Tally
    fused: R | None = None


def final_order(
    ranked: Ranked,
    shown: list[Finding],
    ctx: RankContext,
    limit: int,
    *,
    fuse: Callable[[list[Finding]], R] | None = None,
    refine: Callable[[list[Finding]], list[Finding]] | None = None,
) -> Ordered[R]:
    """The one total order of the report, with the index's fusion or without it.

    The ``shown`` findings (``ranked.shown`` after enrichment moved their confidence) scored
    with their final confidence and sorted (``order_key``). ``fuse`` (a rewritten question
    with the index) may then reorder them, a usage question's uses first, and every unshown
    finding (``ranked.rest``) by whole files; without it nothing unshown moves into the
    report. Then, either way: a callers question's definitions and calls first
    (``callers_first``), a usage question's uses first (``uses_first``), the report's
    ``limit`` (0: all), and ``refine`` (the semantic stage's resolved uses of the target
    first: facts of a later stage, within the shown prefix), the uses kept first. Scores
    match the confidences printed; the tally's file order follows the final order, over
    every finding."""
    final: list[Finding] = []
    for f, b in zip(shown, ranked.parts, strict=True):
        # enrichment may have read the scope of a hit the lexer alone decided (``cq.enrich.shown``)
        depth = ctx.weights.max_depth if f.scope_unknown else nesting_depth(f.containing_scope)
        again = msgspec.structs.replace(
            b, confidence=round(f.confidence, 4), depth_penalty=depth_penalty(depth, ctx.weights)
        )
        final.append(
            msgspec.structs.replace(f, score=total(again), explain=again if ctx.explain else None)
        )
    final.sort(key=order_key)
    fused = fuse([*uses_first(final, ctx), *ranked.rest]) if fuse is not None else None
    if fused is not None:
        final = fused.findings
    final = uses_first(callers_first(final, ctx), ctx)
    asked = _definition_of_used(final, ctx)
    final = final[:limit] if limit > 0 else final
    if asked is not None and limit > 1 and asked not in final:
        final = [*final[:-1], asked]
    if fused is not None and limit > 0 and not ctx.called and ctx.used is None:
        final = _answer_kept(final, fused)
    if refine is not None:
        final = uses_first(refine(final), ctx)
    if fused is not None:
        shown_at = {(f.file, f.line, f.col) for f in final}
        beyond = tuple(
            f
            for f in fused.findings
            if _asked_call(f, ctx.called) and (f.file, f.line, f.col) not in shown_at
        )
        tally = msgspec.structs.replace(
            Tally.of(fused.findings),
            calls=beyond,
            uses=ranked.tally.uses,
            importers=ranked.tally.importers,
        )
        return Ordered(findings=final, tally=tally, fused=fused)
    files = tuple(dict.fromkeys([*(f.file for f in final), *ranked.tally.files_in_rank_order]))
    tally = msgspec.structs.replace(ranked.tally, files_in_rank_order=files)
    return Ordered(findings=final, tally=tally)


def _definition_of_used(findings: list[Finding], ctx: RankContext) -> Finding | None:
    """The definition of the name a usage question asks about among ``findings``, which the
    limit must not cut (``_asked_definition``)."""
    if ctx.used is None:
        return None
    return next((f for f in findings if is_asked_definition(f, ctx.used)), None)


def _answer_kept(final: list[Finding], fused: Reordered) -> list[Finding]:
    """The fusion's Answer's definition among the shown findings, in the place of the last
    when the limit cut it: the Answer is read from the shown findings (``cq.assemble``), and
    ``--limit 3`` must not answer with another function than the default limit does. A
    callers or usage question answers with its calls or uses, never moved for this."""
    at = fused.answer_at
    if at is None or not final or any(_defines_at(f, at) for f in final):
        return final
    found = next((f for f in fused.findings if _defines_at(f, at)), None)
    return final if found is None else [*final[:-1], found]


def _defines_at(f: Finding, at: tuple[str, int]) -> bool:
    return f.category == "definition" and (f.file, f.line) == at


def _asked_call(f: Finding, called: frozenset[str]) -> bool:
    """A call of a name a callers question asks about (``RankContext.called``)."""
    return bool(called) and f.category == "callsite" and last_name(f.text) in called


def callers_first(findings: list[Finding], ctx: RankContext) -> list[Finding]:
    """For a callers question, its function's definitions and calls ahead of the rest (each
    part in its order): after the index fusion, which orders whole files, as before it."""
    if not ctx.called:
        return findings
    dotted = dotted_query(ctx.patterns)
    lead = [_is_lead(f, ctx.called, dotted) for f in findings]
    return [f for f, x in zip(findings, lead, strict=True) if x] + [
        f for f, x in zip(findings, lead, strict=True) if not x
    ]


def uses_first(findings: list[Finding], ctx: RankContext) -> list[Finding]:
    """For a usage question, the uses it asks for ahead of the rest (``use_order``; each
    part in its order); any other query's findings as they are."""
    if ctx.used is None:
        return findings
    return sorted(findings, key=lambda f: use_order(f, ctx.used))


def _is_lead(f: Finding, called: frozenset[str], dotted: Dotted | None = None) -> bool:
    """A definition or a call of the function a callers question names; when it names the
    owner too (``dotted``), that owner's definition and the calls that may reach it, never
    another class's same-named method or its calls."""
    if f.category not in ("definition", "callsite") or last_name(f.text) not in called:
        return False
    if dotted is None:
        return True
    if f.category == "definition":
        return is_target_definition(f, dotted)
    return not is_other_owners_use(f, dotted)


def knowing_importers(ctx: RankContext, findings: list[Finding]) -> RankContext:
    """``ctx`` whose usage question knows the files importing its dotted name's member from
    its owner (``with_importers``): every stage after it orders and counts the same uses."""
    if ctx.used is None:
        return ctx
    return msgspec.structs.replace(ctx, used=with_importers(ctx.used, findings))


def rank_findings(findings: list[Finding], ctx: RankContext, corpus: Corpus) -> list[Finding]:
    """Score and sort every finding (no enrichment in between); deterministic."""
    ranked = score_findings(findings, ctx, corpus, 0)
    return final_order(ranked, ranked.shown, ctx, 0).findings


# what a finding's score depends on: category, role, confidence, scope depth, the exact
# definition, file name and terms factors, and whether it cuts a name
_Key = tuple[str, Role, float, int, float, float, float, bool]


class _Scorer:
    """Each finding's score breakdown, from signals computed once per file, scope or set of
    inputs (an audit search scores tens of thousands of findings sharing a few hundred)."""

    def __init__(self, ctx: RankContext, signal: dict[str, float]) -> None:
        self.ctx, self.signal = ctx, signal
        self.names = queried_names(ctx.patterns)
        self.dotted = dotted_query(ctx.patterns)
        self.boost = ctx.weights.evidence if is_rewritten(ctx.patterns) else ctx.weights.coverage
        self.filenames: dict[str, float] = {}
        self.depths: dict[str | None, int] = {}
        self.terms: dict[tuple[str, tuple[int, ...]], float] = {}  # (file, patterns) -> terms
        self.parts: dict[_Key, ScoreBreakdown] = {}
        self.totals: dict[_Key, float] = {}

    def _key(self, f: Finding, role: Role) -> _Key:
        ctx = self.ctx
        filename = self.filenames.get(f.file)
        if filename is None:
            filename = self.filenames[f.file] = filename_match(f.file, self.names, ctx.weights)
        depth = self.depths.get(f.containing_scope)
        if depth is None:
            depth = self.depths[f.containing_scope] = nesting_depth(f.containing_scope)
        if f.scope_unknown:
            # its scope is unknown, not module level (depth 0 outranked every parsed hit of
            # a method); as deep as any, it never outranks a parsed hit
            depth = ctx.weights.max_depth
        terms = self.terms.get((f.file, f.patterns))
        if terms is None:
            signal = self.signal.get(f.file, 0.0)
            terms = terms_multiplier(f, ctx.patterns, signal, self.boost)
            self.terms[(f.file, f.patterns)] = terms
        if self.dotted is not None:
            exact = dotted_factor(f, self.dotted, ctx.weights)
        elif ctx.called:  # a callers question: its function's definition and calls
            exact = ctx.weights.exact_definition if _is_lead(f, ctx.called) else 1.0
        else:
            exact = exact_definition(f, self.names, ctx.weights)
        return (f.category, role, f.confidence, depth, exact, filename, terms, cuts_name(f))

    def breakdown(self, f: Finding, role: Role) -> ScoreBreakdown:
        key = self._key(f, role)
        found = self.parts.get(key)
        if found is None:
            category, role_, confidence, depth, exact, filename, terms, cut = key
            found = self.parts[key] = breakdown(
                category=category,
                role=role_,
                confidence=confidence,
                focus=self.ctx.focus,
                depth=depth,
                exact_definition=exact,
                filename=filename,
                terms=terms,
                weights=self.ctx.weights,
                cut=cut,
            )
        return found

    def score(self, f: Finding, role: Role) -> float:
        key = self._key(f, role)
        found = self.totals.get(key)
        if found is None:
            found = self.totals[key] = total(self.breakdown(f, role))
        return found


def _file_signal(findings: list[Finding], ctx: RankContext) -> dict[str, float]:
    """Per-file multi-term signal: evidence for a rewritten query, plain coverage otherwise."""
    if is_rewritten(ctx.patterns):
        return file_evidence(findings, ctx.patterns, ctx.path_hints, ctx.weights)
    return file_coverage(findings, ctx.patterns)


def order_key(f: Finding) -> tuple[float, str, int, int]:
    """Best score first, then path, line, column: the one total order every view keeps."""
    return (-f.score, f.file, f.line, f.col)


class _Roles:
    """Path roles, refined for Rust hits inside ``#[cfg(test)]`` items."""

    def __init__(self, corpus: Corpus, findings: list[Finding], use_cache: bool) -> None:
        self.corpus = corpus
        self.by_path: dict[str, Role] = {}
        rust = sorted({f.file for f in findings if f.language == "rust"})
        self.test_ranges = cfg_test_ranges(corpus, rust, use_cache) if rust else {}

    def of(self, f: Finding) -> Role:
        role = self.by_path.get(f.file)
        if role is None:
            role = path_role(f.file)
            if role == "src" and f.language == "rust":
                role = "test" if declared_under_cfg_test(self.corpus, f.file) else role
            self.by_path[f.file] = role
        if role == "src" and f.language == "rust" and in_ranges(f.line, self.test_ranges[f.file]):
            return "test"
        return role


__all__ = [
    "Dotted",
    "Ordered",
    "RankContext",
    "Ranked",
    "Reordered",
    "UseQuestion",
    "abstract_lines",
    "called_names",
    "callers_first",
    "dotted_query",
    "files_named",
    "final_order",
    "is_exact_definition",
    "is_other_owners_use",
    "is_plausible_use",
    "is_target_definition",
    "is_use_site",
    "knowing_importers",
    "last_name",
    "order_key",
    "path_role",
    "queried_names",
    "rank_findings",
    "score_findings",
    "stub_definitions",
    "suggest_names",
    "use_order",
    "use_question",
    "uses_first",
]
