"""Ranking with resolved definitions: what a same-named hit really refers to.

Two questions get a target definition among the shown findings:

- a dotted query (``ABCMeta.register``, ``Client.send``): a definition whose qualified name
  ends with the dotted name (``cq.rank.dotted``); of several (the stdlib's ``abc.py`` and
  ``_py_abc.py``), the one most shown uses resolve to;
- a question about callers ("who calls build_graph_product", "where is it called?"): the
  best-ranked definition of the queried name.

Hits resolved to the target (by Pyrefly, or by cq's syntax fallback) move ahead of the other
shown hits (for a callers question, the callsites that resolve to it lead, ahead of the
definition itself; for a dotted query the definition leads, and same-named uses resolved to
another definition go last); otherwise the order is the score order. A partition, not a weight: a
hit resolved to the target beats a same-named hit resolved elsewhere whatever their scores,
which is what resolution means.
Counts go to ``summary.telemetry.semantic_target`` (``TargetCounts``) so the report can say how many
resolved to the target (and how many of those by cq's syntax fallback, ``via: syntax``).
Without a target, or with no resolved hit, nothing moves.
"""

from __future__ import annotations

import msgspec

from cq.model import Finding, Pattern, TargetCounts
from cq.rank import (
    Dotted,
    dotted_query,
    is_exact_definition,
    is_target_definition,
    last_name,
    queried_names,
)
from cq.semantic.answers import module_of

_RESOLVED_CATEGORIES = frozenset({"callsite", "reference", "import", "from_import", "assignment"})


def refine_order(
    shown: list[Finding], patterns: tuple[Pattern, ...], callers: bool
) -> tuple[list[Finding], TargetCounts | None]:
    """The shown findings, hits resolved to the target first; and the counts to report (None:
    no target). ``callers``: the question asks who calls a function (``Question.callers``)."""
    dotted = dotted_query(patterns)
    if dotted is not None:
        ordered, counts = _dotted_order(shown, dotted)
        if callers and counts is not None:  # "who calls A.b": the Answer lists its callers
            counts = msgspec.structs.replace(counts, callers_question=1)
        return ordered, counts
    if not callers:
        return shown, None
    names = queried_names(patterns)
    target = next((f for f in shown if is_exact_definition(f, names)), None)
    if target is None:
        return shown, None
    keys = _keys(target)
    name = _last(target.text)
    resolved = [_resolved_key(f) if _last(f.text) == name else None for f in shown]
    to_target = [i for i, f in enumerate(shown) if resolved[i] in keys and f.category == "callsite"]
    elsewhere = sum(1 for r in resolved if r is not None and r not in keys)  # same name only
    counts = msgspec.structs.replace(_counts(shown, to_target, elsewhere), callers_question=1)
    lead = set(to_target)
    first = [f for i, f in enumerate(shown) if i in lead]
    return first + [f for i, f in enumerate(shown) if i not in lead], counts


def _dotted_order(
    shown: list[Finding], dotted: Dotted
) -> tuple[list[Finding], TargetCounts | None]:
    """A dotted query: its definition (of several, the one most shown uses resolve to), the
    uses resolved to it, then the rest in score order (plausible receivers first, as scored),
    and same-named uses resolved to another definition last."""
    targets = [i for i, f in enumerate(shown) if is_target_definition(f, dotted)]
    if not targets:
        return shown, None
    uses = [
        i
        for i, f in enumerate(shown)
        if f.category in _RESOLVED_CATEGORIES and last_name(f.text) == dotted.member
    ]
    resolved = {i: _resolved_key(shown[i]) for i in uses}
    tally = [sum(1 for r in resolved.values() if r in _keys(shown[t])) for t in targets]
    target = targets[tally.index(max(tally))]  # ties: the best ranked
    keys = _keys(shown[target])
    to_target = [i for i in uses if resolved[i] in keys]
    elsewhere = [i for i in uses if resolved[i] is not None and resolved[i] not in keys]
    counts = msgspec.structs.replace(_counts(shown, to_target, len(elsewhere)), uses=len(uses))
    if not to_target and not elsewhere:
        return shown, counts
    first, last = [target, *to_target], set(elsewhere)
    middle = [i for i in range(len(shown)) if i not in set(first) and i not in last]
    return [shown[i] for i in (*first, *middle, *elsewhere)], counts


def _counts(shown: list[Finding], to_target: list[int], elsewhere: int) -> TargetCounts:
    return TargetCounts(
        resolved_to_target=len(to_target),
        resolved_elsewhere=elsewhere,
        resolved_to_target_by_syntax=sum(1 for i in to_target if _via(shown[i]) == "syntax"),
        resolved_to_target_by_unique_name=sum(
            1 for i in to_target if _via(shown[i]) == "unique-name"
        ),
    )


def _last(text: str) -> str:
    return text.rsplit(".", 1)[-1]


def _keys(target: Finding) -> set[tuple[str, int]]:
    """The target's place, and its dotted name (``abc.ABCMeta.register`` for ``abc.py`` in
    scope ``ABCMeta.register``): a root holding a module's source (the stdlib) sees uses
    resolved to that module's stub outside the root, which is the same definition."""
    keys = {(target.file, target.line)}
    if target.containing_scope:
        keys.add((f"{module_of(target.file)}.{target.containing_scope}", 0))
    return keys


def _via(f: Finding) -> str | None:
    semantic = f.enrichment.semantic if f.enrichment is not None else None
    target = semantic.definition if semantic is not None else None
    return target.via if target is not None else None


def resolves_to(use: Finding, definition: Finding) -> bool:
    """Whether ``use`` was resolved (Pyrefly, syntax, a unique name) to ``definition``."""
    key = _resolved_key(use)
    return key is not None and key in _keys(definition)


def _resolved_key(f: Finding) -> tuple[str, int] | None:
    """(file, line) of the definition Pyrefly resolved this use to, or (dotted name, 0)
    when it is outside the root."""
    if f.category not in _RESOLVED_CATEGORIES or f.enrichment is None:
        return None
    semantic = f.enrichment.semantic
    target = semantic.definition if semantic is not None else None
    if target is None:
        return None
    if target.file is None:
        return (target.module, 0) if target.module else None
    return (target.file, target.line)
