"""A dotted query's relation to each hit: its named definition, a use whose receiver plausibly
is the named owner, or neither.

``ABCMeta.register`` (``Client.send``, ``pkg.mod.f``, Rust ``Utc::now``) is searched as typed
and, word-bounded, by its last name (``cq.candidates.patterns``): the definition is
``def register`` inside ``class ABCMeta``, the uses are ``x.register(...)``, and most hits of
the last name belong to other owners. By syntax alone:

- the *target* definitions are the definitions of the last name whose qualified name (module
  path, then containing scope) ends with the query's names;
- a use is *plausible* when its receiver names the owner (``ABCMeta.register``,
  ``abc.ABCMeta.register``, ``client.send`` for ``Client.send``, ``Utc::now``) or is
  ``self`` / ``cls`` / ``Self`` / ``super()`` inside the owner's body;
- another owner's definition of the name is a same-named one, ranked below the uses, and so
  is a use without a receiver when the owner is named like a class (``call_event(...)`` is
  not ``BaseMutation.call_event``);
- anything else is neither.

The score weighs these (``RankWeights.dotted_*``, in the ``exact_definition`` factor); the
semantic stage then puts what Pyrefly resolved to the target ahead (``cq.semantic.ranking``).
"""

from __future__ import annotations

import posixpath
import re

import msgspec

from cq.candidates import DOTTED_SOURCE, dotted_parts
from cq.model import Finding, Pattern, RankWeights

# Scope and path segments: ``A.b``, ``impl Utc::now``, ``impl Display for Utc::fmt``.
_SEGMENTS = re.compile(r"\.|::|\s+|/")
# The receiver just before the name: ``a.b.``, ``Type::``, ``Client().``, ``super().``.
_RECEIVER = re.compile(r"([^\W\d]\w*(?:\s*(?:\.|::)\s*[^\W\d]\w*)*)\s*(?:\(\s*\))?\s*(?:\.|::)\s*$")
_RECEIVER_CHARS = 200  # a receiver longer than this is not read (one regex pass per hit)
_OWN_BODY = frozenset({"self", "cls", "Self", "super"})
_MODULE_STEMS = frozenset({"__init__", "mod", "lib", "main"})
# a Rust item no other crate's path names: visible only inside its crate or module, or an
# impl block (the type's, not an item of its own)
_HIDDEN = re.compile(r"\s*(?:pub\s*\(|impl\b)")


class Dotted(msgspec.Struct, frozen=True):
    """The names of a dotted query, owner first (``("ABCMeta", "register")``)."""

    parts: tuple[str, ...]

    @property
    def owner(self) -> str:
        return self.parts[-2]

    @property
    def member(self) -> str:
        return self.parts[-1]


def dotted_query(patterns: tuple[Pattern, ...]) -> Dotted | None:
    """The search's dotted query, when its patterns are one searched with its last name."""
    if not any(p.source == DOTTED_SOURCE for p in patterns):
        return None
    own = next((p for p in patterns if p.source == "query" and p.kind == "identifier"), None)
    parts = dotted_parts(own.text) if own is not None else None
    return Dotted(parts) if parts else None


def is_target_definition(f: Finding, dotted: Dotted) -> bool:
    """A definition of the last name whose qualified name ends with the query's names."""
    if f.category != "definition" or last_name(f.text) != dotted.member:
        return False
    module, scope = _module_segments(f.file), _segments(f.containing_scope or dotted.member)
    if scope[-1] != dotted.member:  # a variant's or a field's scope is its enum's, its struct's
        scope.append(dotted.member)
    n = len(dotted.parts)
    if tuple([*module, *scope][-n:]) == dotted.parts:
        return True
    # the package's path to what a module inside it defines (``sqlfluff.core.Linter`` for
    # ``class Linter`` in ``sqlfluff/core/linter/linter.py``, ``chrono::Utc::now`` for ``now``
    # in ``impl Utc``): the public name a package re-exports from its submodules (``from
    # .linter import Linter`` in its ``__init__``), then the whole scope inside the module
    # (a Rust impl's header before it: ``impl Utc::now``, ``impl Display for Utc::fmt``)
    for k in range(1, min(len(scope), n - 1) + 1):
        header = scope[:-k]
        if header and not (header[0] == "impl" and header[-1] in ("impl", "for")):
            continue
        if tuple(scope[-k:]) == dotted.parts[-k:]:
            hidden = _HIDDEN.match(f.line_text) is not None
            return _package_of(f.file, module, dotted.parts[:-k], hidden)
    return False


def is_plausible_use(f: Finding, dotted: Dotted) -> bool:
    """A hit of the last name (not a definition) whose receiver plausibly is the owner."""
    if f.category == "definition" or last_name(f.text) != dotted.member:
        return False
    receiver = receiver_of(f, dotted.member)
    return is_plausible(f, receiver, dotted) if receiver else False


def is_plausible(f: Finding, receiver: str, dotted: Dotted) -> bool:
    """Whether ``receiver`` (written before the hit's name) plausibly is the owner."""
    last = _segments(receiver)[-1]
    if last == dotted.owner:
        return True
    if last in _OWN_BODY:
        return dotted.owner in _segments(f.containing_scope or "")
    mine, owner = _fold(last), _fold(dotted.owner)
    if mine == owner:
        return True
    if f.file.endswith(".rs") and last[:1].isupper():
        # a Rust type path names that type (``TypedValueParser::parse`` is not
        # ``Parser::parse``): no subclass of a longer name reaches the owner's fn
        return False
    return len(owner) >= 4 and mine.endswith(owner)


def is_other_owners_use(f: Finding, dotted: Dotted) -> bool:
    """A use of the last name that cannot reach the owner's member: a bare call of a method
    of a class-named owner, ``self``/``cls`` inside another class, or another class named as
    its receiver. A use on a variable (``resource_class.create(...)``) may reach it: not this."""
    if f.category == "definition" or last_name(f.text) != dotted.member:
        return False
    receiver = receiver_of(f, dotted.member)
    if receiver is None:
        return False
    if receiver == "":
        return dotted.owner[:1].isupper()
    last = _segments(receiver)[-1]
    if last in _OWN_BODY:
        return dotted.owner not in _segments(f.containing_scope or "")
    named_class = last[:1].isupper() and last[1:] != last[1:].upper()
    return named_class and not is_plausible(f, receiver, dotted)


def dotted_factor(f: Finding, dotted: Dotted, weights: RankWeights) -> float:
    """The ``exact_definition`` factor of a hit of a dotted query: the target definition is
    the answer; a plausible use comes next; another owner's definition of the name goes below
    the uses (it is a same-named one, not the one asked about)."""
    if is_target_definition(f, dotted):
        return weights.exact_definition * weights.dotted_target
    if last_name(f.text) != dotted.member:
        return 1.0
    if f.category == "definition":
        return weights.dotted_other_definition
    receiver = receiver_of(f, dotted.member)
    if receiver == "":
        # ``call_event(...)`` cannot call the method ``BaseMutation.call_event``: a method or
        # associated fn needs a receiver (an owner named like a class, not a module)
        return weights.dotted_bare if dotted.owner[:1].isupper() else 1.0
    if receiver is None:
        return 1.0
    return weights.dotted_receiver if is_plausible(f, receiver, dotted) else 1.0


def receiver_of(f: Finding, member: str) -> str | None:
    """The expression written just before the hit's last name (``Iterator`` in
    ``Iterator.register(...)``) when it is a name, a dotted name or ``Name()``; ``""`` when
    there is none (``register(...)``); None when it cannot be read (``f(x).register``, a
    line cut for the report)."""
    start = f.col + len(f.text) - len(member)
    if not f.text.endswith(member) or f.line_text[start : start + len(member)] != member:
        return None
    before = f.line_text[max(0, start - _RECEIVER_CHARS) : start]
    if not before.rstrip().endswith((".", "::")):
        return ""
    found = _RECEIVER.search(before)
    return found.group(1) if found else None


def last_name(text: str) -> str:
    return _SEGMENTS.split(text)[-1]


def _segments(text: str) -> list[str]:
    return [s for s in _SEGMENTS.split(text) if s]


def _module_segments(path: str) -> list[str]:
    """``pkg/mod.py`` -> ``pkg``, ``mod``; a package's ``__init__.py`` (Rust ``mod.rs``) is
    its directory."""
    stem, _ = posixpath.splitext(path)
    parts = _segments(stem)
    return parts[:-1] if parts and parts[-1] in _MODULE_STEMS else parts


def _package_of(
    path: str, module: list[str], package: tuple[str, ...], hidden: bool = False
) -> bool:
    """Whether ``package`` is the top of the path of the module at ``path`` (``module``, its
    segments), with the module further down it: a Python package below at most one source
    directory (``src/``); a Rust module path from the crate's root (``naive::NaiveDate``),
    led by ``crate`` or by the crate's directory (``clap_builder::builder::Command`` for
    ``clap_builder/src/builder/command.rs``), its ``src/`` left out. A crate whose ``src/``
    is the tree's own is named in no path (``chrono::NaiveDate``): a first name that does not
    lead the module's path is read as the crate's, which its tests and users write first. A
    facade crate re-exports its workspace's implementation crates, named as cargo workspaces
    name them, its name and a part (``clap::Command`` for ``clap_builder/src/builder/
    command.rs``: clap's ``pub use clap_builder::*``), but not a ``hidden`` item, one no other
    crate's path names (``pub(crate) struct Parser``, its ``impl`` block: ``clap::Parser``
    is the public trait)"""
    if path.endswith(".rs"):
        if "src" not in module:
            return False
        at = module.index("src")
        crate, inner = module[at - 1] if at else None, module[at + 1 :]
        crateless = at == 0 and (not inner or package[0] != inner[0])
        facade = crate is not None and crate.startswith(f"{package[0]}_") and not hidden
        led = package[0] in ("crate", crate) or crateless or facade
        within = package[1:] if led else package
        return tuple(inner[: len(within)]) == within
    k = len(package)
    return any(tuple(module[at : at + k]) == package and len(module) > at + k for at in (0, 1))


def _fold(name: str) -> str:
    return name.replace("_", "").lower()
