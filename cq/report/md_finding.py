"""One finding in a markdown line: where it is, its scope, and the facts enrichment found."""

from __future__ import annotations

import re

from cq.model import (
    Finding,
)
from cq.report.md_text import code, shown_line

SHORT_KIND = {"docstring_match": "docstring", "comment_match": "comment", "string_match": "string"}


def scope_of(f: Finding) -> str | None:
    """The scope a hit sits in; a definition's own name is not its scope."""
    scope = f.containing_scope
    if scope and f.category == "definition":
        parts = re.split(r"(\.|::)", scope)
        if parts[-1] == re.split(r"\.|::", f.text)[-1]:
            return "".join(parts[:-2]) or None
    return scope


def line_of(f: Finding) -> str:
    return shown_line(f.line_text, f.line_window)


def where_of(f: Finding) -> str:
    return code(f"{f.file}:{f.line}:{f.col}")


def role_of(f: Finding) -> str:
    return "" if f.role == "src" else f" ({f.role})"


def detail(f: Finding, typed: set[str], one_line: str) -> str:
    """A one-line signature for definitions (and Pyrefly's reference count; an unenriched
    definition's own line), the resolved target or else the call target for callsites, when
    enriched. ``one_line``: the header on one line that assemble made for an unenriched
    definition or a signature spanning lines (``ReportPlan.one_lines``). A definition whose
    signature is printed joins ``typed``."""
    e = f.enrichment
    if e is None:  # e.g. a definition only the index found: its line says what it is
        return f" — {code(one_line)}" if one_line else ""
    if e.signature:
        refs = references(f)
        typed.add(f"{f.file}:{f.line}")
        if "\n" not in e.signature:
            return f" — {code(e.signature)}{refs}"
        return f" — {code(one_line)}{refs}"
    resolved = resolved_target(f, typed)
    if resolved:
        return resolved
    if e.call and e.call.target:
        return f" → {code(e.call.target)}"
    if e.import_ and e.import_.module:
        return f" from {code(e.import_.module)}"
    return ""


def resolved_target(f: Finding, typed: set[str]) -> str:
    """`` → `pkg/mod.py:12` `def f(x: int) -> str` ``: where Pyrefly resolved the name (a
    module name outside the root) and the type it gives it, the first time the report names
    that place (``typed``: the places whose signature or type is printed already); ``→
    `pkg/mod.py:12` (syntax)`` when cq's own reading of the source resolved it, ``(unique
    name)`` when it is the root's one method of that name (Pyrefly's type is then
    ``Unknown``, not shown); empty when unresolved."""
    semantic = f.enrichment.semantic if f.enrichment else None
    target = semantic.definition if semantic else None
    if semantic is None or target is None:
        return ""
    place = f"{target.file}:{target.line}" if target.file else (target.module or "?")
    if target.via in ("syntax", "unique-name"):
        kind = f" ({RESOLVERS[target.via]})"
    elif semantic.type and place not in typed:
        kind = f" {code(semantic.type)}"
        typed.add(place)
    else:
        kind = ""
    return f" → {code(place)}{kind}{diagnostic(f)}"


def diagnostic(f: Finding) -> str:
    """`` · error `...` ``: Pyrefly's first diagnostic at the hit, if any."""
    semantic = f.enrichment.semantic if f.enrichment else None
    if semantic is None or not semantic.diagnostics:
        return ""
    return f" · error {code(semantic.diagnostics[0])}"


def references(f: Finding) -> str:
    semantic = f.enrichment.semantic if f.enrichment else None
    if semantic is None or semantic.references is None:
        return ""
    n = semantic.references
    return f" · {n} reference{'s' if n != 1 else ''}"


def enrichment_facts(f: Finding) -> str:
    """A few key facts of the answer's enrichment, on one line."""
    e = f.enrichment
    if e is None:
        return ""
    facts = []
    if e.decorators:
        facts.append("decorators " + ", ".join(code(d) for d in e.decorators))
    if e.function:
        kinds = [
            k
            for k, on in (("async", e.function.is_async), ("generator", e.function.is_generator))
            if on
        ]
        if e.function.returns_value:
            kinds.append("returns a value")
        if kinds:
            facts.append(", ".join(kinds))
    qualified = [q for q in (e.resolution.qualified_names if e.resolution else ()) if q != f.text]
    if qualified:
        facts.append("qualified " + ", ".join(code(q) for q in qualified[:2]))
    if e.rust:
        # the definition's line is fenced above: only what it does not say, not its
        # visibility, nor the kind of an item, which its keyword opens (``pub const fn``);
        # a variant's or a field's kind, its impl's trait
        kind = e.rust.item_kind
        rust = [
            e.rust.visibility if e.rust.visibility not in f.line_text.split() else None,
            kind_words(kind) if kind and not kind.endswith("_item") else None,
            e.rust.impl_trait and f"impl {e.rust.impl_trait}",
        ]
        facts.append(" ".join(x for x in rust if x))
    semantic = e.semantic
    # a function's type is its signature, which the Answer's line has just printed
    if semantic and semantic.type and not (e.signature and is_function_type(semantic.type)):
        facts.append(f"type {code(semantic.type)}")
    if semantic and semantic.references is not None:
        facts.append(references(f).removeprefix(" · "))
    if e.status != "applied":
        why = f" ({', '.join(e.degrade_reasons)})" if e.degrade_reasons else ""
        facts.append(_ENRICHMENT_WORDS[e.status] + why)
    if semantic and semantic.status in _SEMANTIC_WORDS:
        facts.append(_SEMANTIC_WORDS[semantic.status])
    return " · ".join(x for x in facts if x)


# What the statuses of a hit's reading mean to its reader (``Enrichment.status``,
# ``SemanticFacts.status``); JSON keeps the status words.
_ENRICHMENT_WORDS = {"degraded": "read in part", "skipped": "not read"}
_SEMANTIC_WORDS = {
    "degraded": "some of Pyrefly's answers missing",
    "failed": "Pyrefly did not answer",
}


def is_function_type(type_text: str) -> bool:
    return type_text.startswith(("def ", "async def "))


def kind_words(item_kind: str) -> str:
    """``function_item`` -> function, ``field_declaration`` -> field, ``enum_variant`` ->
    enum variant."""
    return item_kind.removesuffix("_item").removesuffix("_declaration").replace("_", " ")


RESOLVERS = {"pyrefly": "Pyrefly", "syntax": "syntax", "unique-name": "unique name"}


def resolvers(findings: list[Finding]) -> str:
    """Who resolved these hits' definitions, joined by `` + ``: ``Pyrefly``, ``syntax`` (cq's
    own reading of the source, ``via: syntax``), ``unique name`` (the root's one method of
    that name, ``via: unique-name``)."""
    via = resolved_by(findings)
    named = [label for key, label in RESOLVERS.items() if key in via]
    return " + ".join(named) or "Pyrefly"


def resolved_by(findings: list[Finding]) -> set[str]:
    """The ``via`` of each of these hits' resolved definitions (``RESOLVERS``' keys)."""
    return {
        f.enrichment.semantic.definition.via
        for f in findings
        if f.enrichment and f.enrichment.semantic and f.enrichment.semantic.definition
    }
