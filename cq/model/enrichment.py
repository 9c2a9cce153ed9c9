"""Detail added to the hits a report shows. Every field is optional: stages fail open."""

from __future__ import annotations

import msgspec


class Enrichment(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Typed payload of one enriched hit (Python or Rust)."""

    signature: str | None = None
    decorators: tuple[str, ...] = ()
    scope_chain: tuple[str, ...] = ()
    call_target: str | None = None
    status: str = "skipped"  # applied | degraded | skipped
    degrade_reasons: tuple[str, ...] = ()
