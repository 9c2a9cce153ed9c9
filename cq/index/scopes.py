"""rg findings' containing scopes as index qualnames: Python scopes already are
(``Class.method``); a Rust scope names the impl header (``m::impl<T> Tr for Ty<T>::f``), the
index names the self type (``m::Ty::f``)."""

from __future__ import annotations

import re

from cq.index.rsscan import without_generics
from cq.model.language import is_rust

_IMPL = re.compile(r"(?:^|::)impl(?=[\s<])")


def rg_scope_key(file: str, scope: str) -> str:
    if not is_rust(file) or "impl" not in scope:
        return scope
    headers = list(_IMPL.finditer(scope))
    if not headers:
        return scope
    m = headers[-1]
    head = scope[: m.start()]
    tail = without_generics(scope[m.end() :]).rsplit(" for ", 1)[-1].strip()
    parts = tail.split("::")
    item = "::".join(parts[-2:]) if len(parts) > 1 else parts[0]
    item = item.split()[-1] if item.split() else item
    return f"{head}::{item}" if head else item
