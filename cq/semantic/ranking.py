"""Ranking with resolved definitions: what a same-named hit really refers to.

Two questions get a target definition among the shown findings:

- a dotted query (``ABCMeta.register``, ``Client.send``): the definition whose scope path ends
  with the dotted name;
- a question about callers ("who calls build_graph_product", "where is it called?"): the
  best-ranked definition of the queried name.

Hits resolved to the target (by Pyrefly, or by cq's syntax fallback) move ahead of the other
shown hits (for a callers question, the callsites that resolve to it lead, ahead of the
definition itself); otherwise the order is the score order. A partition, not a weight: a
hit resolved to the target beats a same-named hit resolved elsewhere whatever their scores,
which is what resolution means.
Counts go to ``summary.telemetry["semantic.target"]`` so the report can say how many
resolved to the target (and how many of those by cq's syntax fallback, ``via: syntax``).
Without a target, or with no resolved hit, nothing moves.
"""

from __future__ import annotations

import re

from cq.model import Finding, Pattern
from cq.rank import is_exact_definition, queried_names
from cq.semantic.answers import module_of

_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
# "who calls X", "where is it called?", "callers of X", "what calls X", "call sites of X"
_CALLERS = re.compile(
    r"\b(?:who|what|where|which)\b.*\bcall(?:s|ed|ing)?\b|\bcallers?\b|\bcall ?sites?\b", re.I
)
_RESOLVED_CATEGORIES = frozenset({"callsite", "reference", "import", "from_import", "assignment"})


def refine_order(
    shown: list[Finding], patterns: tuple[Pattern, ...], query: str
) -> tuple[list[Finding], dict[str, int]]:
    """The shown findings, hits resolved to the target first; and the counts to report."""
    dotted = query.strip() if _DOTTED.fullmatch(query.strip()) else None
    callers = dotted is None and bool(_CALLERS.search(query))
    target = _target(shown, patterns, dotted, callers)
    if target is None:
        return shown, {}
    keys = _keys(target)
    name = _last(target.text)
    resolved = [_resolved_key(f) if _last(f.text) == name else None for f in shown]
    to_target = [
        i
        for i, f in enumerate(shown)
        if resolved[i] in keys and (not callers or f.category == "callsite")
    ]
    elsewhere = sum(1 for r in resolved if r is not None and r not in keys)  # same name only
    counts = {"resolved_to_target": len(to_target), "resolved_elsewhere": elsewhere}
    by_syntax = sum(1 for i in to_target if _via(shown[i]) == "syntax")
    if by_syntax:
        counts["resolved_to_target_by_syntax"] = by_syntax
    by_name = sum(1 for i in to_target if _via(shown[i]) == "unique-name")
    if by_name:
        counts["resolved_to_target_by_unique_name"] = by_name
    if callers:
        counts["callers_question"] = 1
    if not to_target:
        return shown, counts
    lead = set(to_target)
    if dotted:  # the target definition itself leads too: it is the answer
        lead.add(shown.index(target))
    first = [f for i, f in enumerate(shown) if i in lead]
    return first + [f for i, f in enumerate(shown) if i not in lead], counts


def _target(
    shown: list[Finding], patterns: tuple[Pattern, ...], dotted: str | None, callers: bool
) -> Finding | None:
    definitions = [f for f in shown if f.category == "definition"]
    if dotted:
        return next((f for f in definitions if _scope_ends_with(f.containing_scope, dotted)), None)
    if callers:
        names = queried_names(patterns)
        return next((f for f in definitions if is_exact_definition(f, names)), None)
    return None


def _last(text: str) -> str:
    return text.rsplit(".", 1)[-1]


def _scope_ends_with(scope: str | None, dotted: str) -> bool:
    return bool(scope) and (scope == dotted or str(scope).endswith("." + dotted))


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
