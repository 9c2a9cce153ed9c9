"""What a query asks for, beyond its names: a question about a function's callers.

"who calls build_graph", "where is it called?", "callers of X", "call sites of X": the answer
is the named function with the calls that resolve to it (``cq/semantic/ranking.py``), not the
code the question's words are about (``cq/assemble/result.py``); its callsites score like its
definition (``called_names``), so that they are shown even where nothing resolves them (Rust,
``--no-semantic``). A question about a name's uses ("where is X imported?", "... raised?",
"... instantiated in the handlers?"): its uses of the kind asked are shown first and are the
Answer (``use_question``, ``is_use_site``), not the definition.
"""

from __future__ import annotations

import re

import msgspec

from cq.candidates import dotted_parts
from cq.model import Finding, Question
from cq.model.question import Uses
from cq.rank.dotted import (
    Dotted,
    is_other_owners_use,
    is_plausible_use,
    is_target_definition,
    last_name,
    receiver_of,
)
from cq.rewrite import stem


def called_names(
    question: Question, names: frozenset[str], subject: str | None = None
) -> frozenset[str]:
    """The function a callers question asks about: the queried ``names`` it writes itself
    ("who calls build_graph": build_graph), not the ones a rewrite guessed, or the ``subject``
    its "it" was read as ("where is it called?" after ``--follow-up``); empty for other
    queries."""
    if not question.callers:
        return frozenset()
    return (names & question.written) | ({subject} if subject else set())


# The findings that are uses of a name, by what a usage question asks of it
# (``Question.uses``): the ones a line's text tells apart are checked on that line.
_IMPORTS = frozenset({"import", "from_import"})
_USES = _IMPORTS | frozenset({"callsite", "reference", "annotation", "assignment"})
_RAISING = re.compile(r"\braise\b|\bthrow\b|\bErr\s*\(|\bpanic!")
_CATCHING = re.compile(r"\bexcept\b|\bcatch\b")


class UseQuestion(msgspec.Struct, frozen=True):
    """A usage question as ranking and the Answer read it: the name's last part, which uses
    answer, the words of the place it is confined to (``Question.within``), and the owner
    a dotted name is reached through (``pyro.sample``, ``Schema.load``, ``Utc::now``)."""

    name: str
    uses: Uses
    within: tuple[str, ...] = ()
    dotted: Dotted | None = None
    # the files importing the member from a module-like owner (``from pyro import sample``,
    # ``importers``): a bare ``sample(...)`` there is a use through it
    importers: frozenset[str] = frozenset()


def use_question(question: Question) -> UseQuestion | None:
    """The usage question ``question`` asks; None for any other query."""
    if question.intent != "usage" or question.uses is None:
        return None
    asked = question.asked_name or ""
    parts = dotted_parts(asked)
    dotted = Dotted(parts) if parts else None
    return UseQuestion(last_name(asked), question.uses, question.within, dotted)


def use_kinds(uses: Uses) -> frozenset[str]:
    """The finding categories that may answer a usage question asking for ``uses``."""
    return _IMPORTS if uses == "imports" else _USES


def is_asked_definition(f: Finding, asked: UseQuestion) -> bool:
    """``f`` defines the name a usage question asks about (through its owner when dotted):
    what its Answer's "(defined at ...)" names, found by a pattern, never an index unit."""
    if f.category != "definition" or f.tier == "index" or last_name(f.text) != asked.name:
        return False
    return asked.dotted is None or is_target_definition(f, asked.dotted)


def is_use_site(f: Finding, asked: UseQuestion) -> bool:
    """``f`` is a use of the name ``asked`` about, of the kind it asks for: an import, a
    call making one (an instance), a line raising it, a handler catching it, or any use."""
    if f.category not in use_kinds(asked.uses):
        return False
    if asked.name and last_name(f.text) != asked.name:
        return False
    if asked.dotted is not None and not _through_owner(f, asked.dotted, asked.importers):
        return False
    if asked.uses == "instances":
        return f.category == "callsite"
    if asked.uses == "raises":
        return _RAISING.search(f.line_text) is not None
    if asked.uses == "catches":
        return _CATCHING.search(f.line_text) is not None
    if asked.uses in ("implements", "subclasses"):
        return _implementing(f)
    return True


# A class's bases (``class T(Base, Mixin):``) and a trait's impl (``impl<T> Trait for T {``):
# the name between the parenthesis and its close, or before ``for``
_CLASS_BASES = re.compile(r"\s*class\s+\w+\s*(?:\[[^\]]*\])?\s*\((?P<bases>[^)]*)")
_IMPL_FOR = re.compile(r"\s*(?:pub\s+)?(?:unsafe\s+)?impl\b(?P<trait>.*?)\sfor\s")


def _implementing(f: Finding) -> bool:
    """``f``'s name is a base of the class its line defines, or the trait its line
    implements for a type: an implementor or a subclass of it."""
    line = f.line_text
    for found, group in ((_CLASS_BASES.match(line), "bases"), (_IMPL_FOR.match(line), "trait")):
        if found is not None and found.start(group) <= f.col < found.end(group):
            return True
    return False


def _through_owner(f: Finding, dotted: Dotted, importers: frozenset[str] = frozenset()) -> bool:
    """A use of the dotted name's member that goes through its owner: an import naming the
    owner's module (``from pyro import sample``; a line holding only the name, inside a
    parenthesized import, cannot tell and is kept); for a module-like owner (``pyro``) a
    receiver naming it (``pyro.sample(...)``, not ``dist.sample()``), or none in a file that
    imports the member from it (``importers``); for a class-like one (``Schema``, ``Utc``)
    any use that may reach it (``schema.load(...)``, ``self.load`` inside it:
    ``is_other_owners_use``)."""
    if f.category in _IMPORTS:
        words = _WORDS.findall(f.line_text[: f.col])
        return not words or dotted.owner in words
    if dotted.owner[:1].isupper():
        return not is_other_owners_use(f, dotted)
    if f.file in importers and receiver_of(f, dotted.member) == "":
        return True
    return is_plausible_use(f, dotted)


def with_importers(asked: UseQuestion, findings: list[Finding]) -> UseQuestion:
    """``asked`` knowing the files that import its member from its module-like owner by
    name (``from pyro import sample``, not a parenthesized import's line that cannot tell),
    so that their bare uses count (``_through_owner``)."""
    dotted = asked.dotted
    if dotted is None or dotted.owner[:1].isupper():
        return asked
    files = frozenset(
        f.file
        for f in findings
        if f.category == "from_import"
        and last_name(f.text) == dotted.member
        and dotted.owner in _WORDS.findall(f.line_text[: f.col])
    )
    return msgspec.structs.replace(asked, importers=files)


_WORDS = re.compile(r"\w+")


def in_place(path: str, within: tuple[str, ...]) -> bool:
    """Whether ``path``'s directories (or its file's name) are named by every word of
    ``within`` ("torch models": ``src/gluonts/torch/model/...``), compared by stem."""
    if not within:
        return True
    parts = {stem(p) for part in path.split("/") for p in _PARTS.split(part.lower()) if p}
    return all(stem(w) in parts for w in within)


_PARTS = re.compile(r"[^a-z0-9]+")


def use_order(
    f: Finding, asked: UseQuestion | None, role: str | None = None
) -> tuple[bool, bool, bool]:
    """A finding's place in a usage question's order, before its score: its uses first,
    those in the place it names first among them, then those outside tests (``role``: the
    finding's, when not yet set on it)."""
    if asked is None or not is_use_site(f, asked):
        return (True, True, True)
    return (False, not in_place(f.file, asked.within), (role or f.role) == "test")
