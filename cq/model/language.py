"""Which language a file is written in, decided by its extension alone and written once here:
the search's scope, the index, fusion, enrichment and the semantic view all ask this module,
so a new extension (or a new language) is added in one place."""

from __future__ import annotations

from cq.model.match import Language
from cq.model.request import LangScope

EXTENSIONS: dict[Language, tuple[str, ...]] = {
    "python": (".py", ".pyi"),
    "rust": (".rs",),
}


def languages_for(scope: LangScope) -> tuple[Language, ...]:
    """The concrete languages of a scope, in report order."""
    if scope == "auto":
        return ("python", "rust")
    return (scope,)


def language_of(path: str, scope: LangScope = "auto") -> Language | None:
    """The language a path belongs to within the scope, or None when out of scope (the
    extension is read case-blind, as the scope has always read it)."""
    lower = path.lower()
    for lang in languages_for(scope):
        if lower.endswith(EXTENSIONS[lang]):
            return lang
    return None


def is_rust(path: str) -> bool:
    return language_of(path) == "rust"


def is_python_module(path: str) -> bool:
    """A Python source file (``.py``), not a stub: a stub declares names without code."""
    return language_of(path) == "python" and not is_stub(path)


def is_stub(path: str) -> bool:
    """A Python stub file (``.pyi``)."""
    return path.lower().endswith(".pyi")
