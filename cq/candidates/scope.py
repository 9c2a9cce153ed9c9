"""Language scope: which files belong to which language, decided by extension alone."""

from __future__ import annotations

from cq.model import LangScope, Language

_EXTENSIONS: dict[Language, tuple[str, ...]] = {
    "python": (".py", ".pyi"),
    "rust": (".rs",),
}


def languages_for(scope: LangScope) -> tuple[Language, ...]:
    """The concrete languages of a scope, in report order."""
    if scope == "auto":
        return ("python", "rust")
    return (scope,)


def scope_globs(scope: LangScope) -> tuple[str, ...]:
    """rg ``-g`` globs admitting the scope's files."""
    return tuple(f"*{ext}" for lang in languages_for(scope) for ext in _EXTENSIONS[lang])


def language_of(path: str, scope: LangScope) -> Language | None:
    """The language a path belongs to within the scope, or None when out of scope."""
    lower = path.lower()
    for lang in languages_for(scope):
        if lower.endswith(_EXTENSIONS[lang]):
            return lang
    return None
