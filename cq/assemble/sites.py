"""Which shown findings answer a phrase or a usage question, read from the findings alone.

A phrase ("The specified bucket does not exist", a log line, a help text) is answered by the
code that writes it: a string in source code that is raised, logged, printed or formatted
there, ahead of a help text, a docstring or a test asserting it (``message_site``). A usage
question ("where is X imported?", "where is X used?") is answered by the name's uses, not
its definition (``use_sites``).
"""

from __future__ import annotations

import re

import msgspec

from cq.model import Finding, Question
from cq.rank import is_use_site, last_name, use_order, use_question

# How a line uses the string it holds, strongest first: the verb the Answer says.
_RAISES = re.compile(
    r"\braise\b|\bthrow\b|\b\w*(?:Error|Exception|Warning)\s*\(|\bsuper\(\)\.__init__\(|"
    r"\b(?:panic|bail|anyhow|unreachable|todo|unimplemented)!|\bErr\s*\(|\.expect\s*\("
)
_LOGS = re.compile(
    r"\b(?:log(?:ger|ging)?|warnings?|LOG|LOGGER)\s*\.\s*\w+\s*\(|\b(?:warn|error|info|debug|trace)!"
)
_PRINTS = re.compile(r"\bprint\s*\(|\b(?:e?print(?:ln)?|write(?:ln)?)!|\.write\s*\(|\becho\b")
_FORMATS = re.compile(r"\.format\s*\(|\bformat!|\bf[\"']|%\s*\(|\bmessage\b|\bmsg\b|\berr")
# A flag's help or a doc attribute: about the message, not where it is produced.
_HELPS = re.compile(r"\b(?:help|about|long_about|doc\w*|description|usage)\s*[=:(]", re.I)
_EXCEPTION_CLASS = re.compile(r"(?:Error|Exception|Warning)$")
_EXCEPTION_FILES = re.compile(r"(?:^|/)(?:exceptions?|errors?)\.(?:py|rs)$")
_CODE_STRINGS = frozenset({"string_match", "text_match"})
# a quote on the line up to a hit's first character: a text match there may sit in a string
# the classifier did not read as one; with none it is code
_QUOTE = re.compile(r"[\"'`]")


class Site(msgspec.Struct, frozen=True):
    """The finding that writes a phrase (its index among the shown ones) and how."""

    finding: int
    verb: str


def message_site(findings: tuple[Finding, ...]) -> Site | None:
    """The shown finding best placed to be where a phrase comes from: in source code, not a
    test, a docstring or a comment; a line that raises it (or a constructor of an exception
    class or an errors module) before one that logs or prints it, before one that formats it,
    before any other; a help text last. Ties keep the report's order. None: no such finding
    (every hit is a test, a docstring, a comment)."""
    best: tuple[int, int] | None = None
    verb = ""
    for i, f in enumerate(findings):
        if f.category not in _CODE_STRINGS or f.role == "test":
            continue
        if f.category == "text_match" and not _QUOTE.search(f.line_text[: f.col + 1]):
            continue  # code, not a string (``impl ArgAction {`` holds "impl Arg")
        strength, said = _strength(f)
        if best is None or strength > best[0]:
            best, verb = (strength, i), said
    return Site(best[1], verb) if best is not None else None


def _strength(f: Finding) -> tuple[int, str]:
    line = f.line_text
    if _HELPS.search(line[: f.col]):
        return 0, "writes"
    scope = f.containing_scope or ""
    owner = scope.rsplit(".", 1)[0] if "." in scope else ""
    if _RAISES.search(line) or _EXCEPTION_CLASS.search(owner) or _EXCEPTION_FILES.search(f.file):
        return 4, "raises"
    if _LOGS.search(line):
        return 3, "logs"
    if _PRINTS.search(line):
        return 3, "prints"
    if _FORMATS.search(line):
        return 2, "writes"
    return 1, "writes"


def use_sites(
    findings: tuple[Finding, ...], question: Question, importers: frozenset[str] = frozenset()
) -> tuple[int, ...]:
    """The shown uses of the name a usage question asks about, in the report's order: its
    imports for "where is X imported?", the calls making one for "... instantiated?", the
    lines raising or catching it, every use in code (imports, calls, references,
    annotations) for "where is X used?" (``cq.rank.is_use_site``); a use in the place the
    question names, then one in source, before the others (``use_order``). Imports nearest
    the name's definition come first among those (``_nearness``); ``importers``: the files
    importing a dotted name's member from its owner (``cq.rank.with_importers``)."""
    asked = use_question(question)
    if asked is None:
        return ()
    asked = msgspec.structs.replace(asked, importers=importers)
    found = [i for i, f in enumerate(findings) if is_use_site(f, asked)]
    home = _defined_in(findings, asked.name) if asked.uses == "imports" else None
    return tuple(
        sorted(found, key=lambda i: (use_order(findings[i], asked), -_nearness(findings[i], home)))
    )


def _defined_in(findings: tuple[Finding, ...], name: str) -> str | None:
    """The file of the shown definition of ``name`` outside the tests (the first), if any."""
    return next(
        (
            f.file
            for f in findings
            if f.category == "definition" and f.role != "test" and last_name(f.text) == name
        ),
        None,
    )


def _nearness(f: Finding, home: str | None) -> int:
    """How many leading directories ``f``'s file shares with the definition's (``home``):
    "where is X imported?" is first answered by the imports of the package that defines it
    (its ``__init__`` exporting it, its neighbours), which is how the name travels from its
    module, before those of another package or a plugin beside it
    (``bench/data/everyday.jsonl``: torchio-07, sqlfluff-08)."""
    if home is None:
        return 0
    shared = 0
    for a, b in zip(f.file.split("/")[:-1], home.split("/")[:-1], strict=False):
        if a != b:
            break
        shared += 1
    return shared


_KEYWORD = re.compile(r"(?:^|,)\s*(\*{0,2}[^\W\d]\w*)\s*(?=[:=,]|$)")
_CALL_KEYWORD = re.compile(r"(?:^|,)\s*([^\W\d]\w*)\s*=(?!=)")


def cannot_call(call: Finding, definition: Finding) -> bool:
    """Whether ``call`` passes a keyword argument the definition does not take (on the call's
    own line): a client library's method of the same name (``client.create_bucket(Bucket=
    ...)``), not this one. False when either cannot be read (a definition taking
    ``**kwargs``, a signature not known)."""
    params = _parameters(definition)
    if params is None:
        return False
    passed = _keywords(call)
    return any(k not in params for k in passed)


def _parameters(definition: Finding) -> frozenset[str] | None:
    """The definition's parameter names; None when it takes any keyword or is not known."""
    signature = definition.enrichment.signature if definition.enrichment else None
    text = signature or definition.line_text
    start = text.find("(")
    inside = _top_level(text[start + 1 :]) if start >= 0 else None
    if inside is None or definition.language != "python":
        return None
    names = [m.group(1) for m in _KEYWORD.finditer(inside)]
    if any(n.startswith("**") for n in names):
        return None
    return frozenset(n.lstrip("*") for n in names)


def _keywords(call: Finding) -> list[str]:
    """The keyword arguments a call passes on its own line (nested calls' left out)."""
    line = call.line_text
    at = line.find("(", call.col - 1 + len(call.text))
    inside = _top_level(line[at + 1 :], closed=False) if at >= 0 else None
    return [m.group(1) for m in _CALL_KEYWORD.finditer(inside or "")]


def _top_level(text: str, *, closed: bool = True) -> str | None:
    """``text`` up to the parenthesis closing the one just before it, with nested brackets'
    contents left out; None when it is not closed and ``closed`` asks that it be."""
    depth, out = 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                return "".join(out)
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return None if closed else "".join(out)
