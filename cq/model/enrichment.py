"""Detail added to the hits a report shows: one typed payload per enriched hit.

Every part is optional because every stage fails open: a stage that raises leaves its part
empty, records a ``StageReport`` with the reason, and the other stages' parts stay. Python hits
fill ``function``/``import_``/``resolution``/``agreement``; Rust hits fill ``rust``.
Nothing here is volatile: stage timings live in ``RunInfo``, never in a finding.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from cq.model.semantic import SemanticFacts, SemanticStatus

EnrichmentStatus = Literal["applied", "degraded", "skipped"]
StageName = Literal["ast_grep", "python_ast", "imports", "libcst", "tree_sitter"]
AgreementStatus = Literal["full", "partial", "conflict"]


class StageStatus(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """How each stage that applies to the hit went; a stage that does not apply is absent.

    ``skipped`` here means a limit stopped the stage (time budget, file size, encoding); the
    reason is in ``Enrichment.degrade_reasons`` as for ``degraded``.
    """

    ast_grep: EnrichmentStatus | None = None
    python_ast: EnrichmentStatus | None = None
    imports: EnrichmentStatus | None = None
    libcst: EnrichmentStatus | None = None
    tree_sitter: EnrichmentStatus | None = None
    semantic: SemanticStatus | None = None  # Pyrefly (``cq.semantic``); may be ``failed``


class CallFacts(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The call the hit is the callee of: ``receiver.method(...)`` or ``target(...)``."""

    target: str | None = None  # callee expression text, whitespace-normalised
    receiver: str | None = None  # "self.registry" in self.registry.register(...)
    method: str | None = None  # "register"


class FunctionFacts(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Behaviour of the function the hit defines (Python ``ast``; nested defs not counted).

    False and zero are left out of the JSON: ``{}`` is a plain function returning nothing.
    """

    is_async: bool = False
    is_generator: bool = False
    awaits: int = 0
    yields: int = 0
    returns_value: bool = False


class ImportFacts(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The import statement the hit is part of."""

    module: str | None = None  # "os.path"; None for ``from . import x``
    names: tuple[str, ...] = ()  # imported names, "name as alias" when aliased
    alias: str | None = None  # the local name the hit's import binds, when aliased
    level: int = 0  # relative-import dots
    type_checking: bool = False  # inside ``if TYPE_CHECKING:``


class Binding(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One place that may bind the hit's name in its scope (LibCST ``ScopeProvider``)."""

    kind: str  # import | def | class | param | assign | builtin
    line: int = 0  # 1-based line in the file; 0 for builtins


class ResolutionFacts(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What the hit's name resolves to (LibCST metadata)."""

    qualified_names: tuple[str, ...] = ()
    bindings: tuple[Binding, ...] = ()
    import_alias_chain: tuple[str, ...] = ()  # local name first: ("np", "numpy")


class RustFacts(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The Rust item the hit names (or sits in) and its surroundings (tree-sitter)."""

    item_kind: str | None = None  # function_item, struct_item, trait_item, ...
    visibility: str | None = None  # "pub", "pub(crate)"
    generics: str | None = None  # "<T: Clone>"
    where_clause: str | None = None
    attributes: tuple[str, ...] = ()  # "#[inline]" etc., derive and cfg included
    derives: tuple[str, ...] = ()
    cfg_test: bool = False  # the item or an enclosing module is #[cfg(test)]
    is_test: bool = False  # #[test] / #[tokio::test] function
    impl_target: str | None = None
    impl_trait: str | None = None
    macro: str | None = None  # name of the macro invocation the hit is in
    module: str | None = None  # enclosing inline modules, "a::tests"


class ParseQuality(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Tree-sitter's error recovery in the hit's file. For Python, said where the top-level
    statements holding the hit do not parse alone: a syntax error elsewhere in the file
    does not touch how the hit is read, and goes unsaid."""

    error_nodes: int = 0
    missing_nodes: int = 0
    hit_in_error: bool = False


class Agreement(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Whether ast-grep, LibCST and tree-sitter agree on the fields each produced."""

    status: AgreementStatus
    sources: tuple[str, ...] = ()  # omitted when full: all three
    conflicts: tuple[str, ...] = ()  # "ast_grep vs libcst: call_target"


class Enrichment(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Typed payload of one enriched hit (Python or Rust). Field order is the JSON order."""

    status: EnrichmentStatus  # always present
    construct: str | None = None  # function_def, class_def, call, import, attribute, ...
    signature: str | None = None  # header of the definition the hit names, as written
    decorators: tuple[str, ...] = ()
    class_context: str | None = None
    scope_chain: tuple[str, ...] = ()  # outermost first, excluding the hit's own definition
    structural_context: tuple[str, ...] = ()  # nearest ancestor kinds, innermost first
    call: CallFacts | None = None
    function: FunctionFacts | None = None
    import_: ImportFacts | None = msgspec.field(default=None, name="import")
    resolution: ResolutionFacts | None = None
    rust: RustFacts | None = None
    parse_quality: ParseQuality | None = None
    agreement: Agreement | None = None
    semantic: SemanticFacts | None = None  # Pyrefly, when the stage is on
    stages: StageStatus | None = None
    degrade_reasons: tuple[str, ...] = ()
    dropped_fields: tuple[str, ...] = ()  # removed by the payload byte budget, least useful first
