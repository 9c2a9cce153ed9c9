"""What Pyrefly's language server says about one shown Python hit (``cq.semantic``).

Every field is optional: the server may be missing, slow, or have no answer for a position.
``status`` says how the stage went for the hit, ``reason`` why it was not ``applied``;
``pending`` when the answer was not in cq's cache when the search looked: a search shows
only cached answers (the same cache, the same report, whatever the machine's load), and a
long-lived cq asks Pyrefly for the missing ones in the background.
"""

from __future__ import annotations

from typing import Literal

import msgspec

SemanticStatus = Literal["applied", "degraded", "failed", "skipped", "pending"]
DefinitionSource = Literal["pyrefly", "syntax", "unique-name"]


class SemanticDefinition(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Where the hit's name is defined: a place in the root (``file`` relative to it, 1-based
    ``line`` and ``col``), or, outside the root, only the dotted name (``typing.Protocol``)."""

    file: str | None = None
    line: int = 0
    col: int = 0
    module: str | None = None
    # who answered: ``pyrefly``, or ``syntax`` when Pyrefly had none and cq's own reading of
    # the source is certain (``cq.semantic.syntax_resolve``), or ``unique-name``: a weaker
    # reading, for ``x.m()`` with ``x`` untyped, the root's one method ``m``
    # (``cq.semantic.unique_name``)
    via: DefinitionSource | None = None


class SemanticFacts(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Type, resolved definition, reference count and errors at the hit. Field order is the
    JSON order."""

    status: SemanticStatus
    type: str | None = None  # first line of the hover, trimmed
    definition: SemanticDefinition | None = None  # callsites, references, imports, attributes
    references: int | None = None  # definitions: uses within the root
    diagnostics: tuple[str, ...] = ()  # type errors on the hit's line: "code: message"
    reason: str | None = None  # why not applied (server missing, time budget, ...)


class SemanticSummary(msgspec.Struct, frozen=True, kw_only=True):
    """How the shown Python hits' answers stood: ``pending`` of them were not in the cache;
    ``partial`` of them were first answers (type and definition: what the order and the
    Answer read), their reference counts and errors still to come; ``asking`` says who asks
    for them: ``background`` (a long-lived cq: shown from a later search on), ``none`` (a
    one-shot search without a wait asks nobody: ``cq mcp``, cq's server or
    ``--semantic-wait`` do)."""

    pending: int = 0
    asking: Literal["background", "none"] = "none"
    partial: int = 0
