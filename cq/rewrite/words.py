"""Word handling shared by the rewriters and the index's question words: tokens, subwords,
the one stop-word list (``FUNCTION_WORDS`` inside ``STOP_WORDS``) and the one stemmer (one
inflection table: ``stem`` reads it as a key two spellings share, ``base_forms`` as the
spellings an inflected word's base may take in code).

No I/O, no cq imports beyond the standard library: pure functions over strings.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


# The one stop-word list, in two grades. FUNCTION_WORDS: English closed-class words, which
# say nothing about which code is meant and are left out of everything asked of the index; as
# subwords of test names (``test_fields_are_added``) or of ``how_to`` they matched it. Words
# code spells names with (``is``, ``get``, ``set``, ``not``, ``to``, ``in``: ``is_valid``,
# ``to_dict``) are not among them. Measured with bench/studies/index_fusion.py --requery on
# the saved signals (figures: bench/results/2026-11-29-figures-from-cq.md).
FUNCTION_WORDS = _wordset(
    """a an the are am was were be been being do does did doing has have had having how
    what where why which who whom whose when whether would could should might must shall
    will i me my we our you your he she him her his they them their its this that these
    those there here than then so such very just also too about into onto upon"""
)
# STOP_WORDS: the function words and the prepositions, conjunctions and light verbs a
# rewritten question drops too (rg patterns made of them match everything).
STOP_WORDS = FUNCTION_WORDS | _wordset(
    """above after again against all and any as at because before below between both but by
    can done down during each else even ever every few for from further get gets getting
    got hers if in is it itself let lets like may more most much no nor not now of off on
    once one only or other out over own same see seems since some though through to under
    until up us use used uses using via well while with within without yet yours"""
)
QUESTION_WORDS = frozenset({"how", "what", "where", "why", "which", "who", "when", "does", "is"})
PRONOUNS = frozenset({"it", "its", "this", "that", "these", "those", "them", "they"})

# Words an issue or question uses about code that say nothing about *which* code.
GENERIC_WORDS = _wordset(
    """bug issue error errors problem problems fix fixed fixes expected actual behavior
    behaviour result results output outputs input example examples code file files function
    functions method methods class classes module modules value values call called calls
    calling work works working worked case cases version versions please thanks thank hi hello
    would think want need needs seem seems way thing things new old true false none self cls
    return returns returned instead currently however following below above run running
    raise raises raised exception traceback line lines python reproduce steps environment
    install installed pip import imports get set make makes made something anything also
    still just really actually maybe possible possibly correct correctly wrong default
    defaults support supported test tests testing"""
)

# ``self.config``, ``Self::new``, ``crate::parse``: a receiver or a path root, not a type a
# name belongs to (a dotted query is searched as written; a question asks about the member)
RECEIVERS = frozenset({"self", "cls", "Self", "super", "crate"})

# Code synonyms: a word on the left also looks for names containing any word on the right.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "insert": ("add", "put", "append", "store", "push"),
    "add": ("insert", "append", "put", "register"),
    "store": ("save", "put", "write", "persist"),
    "save": ("store", "write", "persist", "dump"),
    "remove": ("delete", "drop", "discard", "pop", "clear"),
    "delete": ("remove", "drop", "discard"),
    "find": ("search", "lookup", "locate", "get"),
    "search": ("find", "lookup", "query"),
    "load": ("read", "parse", "open", "fetch"),
    "read": ("load", "parse"),
    "write": ("save", "dump", "emit", "store"),
    "convert": ("to", "from", "transform", "cast", "coerce"),
    "create": ("make", "build", "new", "init"),
    "build": ("make", "create", "construct"),
    "check": ("validate", "verify", "is"),
    "validate": ("check", "verify", "validator"),
    "start": ("begin", "init", "open", "launch"),
    "stop": ("end", "close", "shutdown", "halt"),
    "error": ("exception", "raise", "fail"),
    "config": ("settings", "options", "configuration", "conf"),
    "settings": ("config", "options"),
    "print": ("display", "show", "render", "format"),
    "show": ("display", "render", "print"),
    "update": ("modify", "change", "set"),
    "compare": ("equal", "eq", "cmp"),
    "copy": ("clone", "duplicate"),
    "sort": ("order", "rank"),
    "parse": ("load", "read", "decode"),
    "serialize": ("dump", "encode", "serialise"),
    "deserialize": ("load", "decode", "deserialise"),
}

# Words a question spells out and code abbreviates: "how is a pipeline evaluated?" asks for
# ``eval_pipeline``, "where is the configuration read?" for ``read_config``. Common
# programming abbreviations, not any project's; matched as synonyms are (half a word's credit,
# and a name must still cover two of the question's words). Measured with
# bench/studies/index_fusion.py, signals gathered with and without them (figures:
# bench/results/2026-11-29-figures-from-cq.md).
ABBREVIATIONS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "evaluate": ("eval",),
        "execute": ("exec",),
        "initialize": ("init",),
        "initialise": ("init",),
        "generate": ("gen",),
        "argument": ("arg",),
        "parameter": ("param",),
        "attribute": ("attr",),
        "message": ("msg",),
        "context": ("ctx",),
        "directory": ("dir",),
        "environment": ("env",),
        "information": ("info",),
        "temporary": ("tmp", "temp"),
        "number": ("num",),
        "length": ("len",),
        "buffer": ("buf",),
        "source": ("src",),
        "destination": ("dst", "dest"),
        "variable": ("var",),
        "specification": ("spec",),
        "connection": ("conn",),
        "request": ("req",),
        "response": ("resp",),
        "database": ("db",),
        "object": ("obj",),
        "previous": ("prev",),
        "current": ("cur", "curr"),
        "maximum": ("max",),
        "minimum": ("min",),
        "statistics": ("stats", "stat"),
        "utility": ("util",),
        "reference": ("ref",),
        "representation": ("repr",),
        "calculate": ("calc",),
        "sequence": ("seq",),
        "position": ("pos",),
        "expression": ("expr",),
        "statement": ("stmt",),
        "identifier": ("ident", "id"),
        "allocate": ("alloc",),
        "dimension": ("dim",),
        "gradient": ("grad",),
        "synchronize": ("sync",),
        "asynchronous": ("async",),
        "authentication": ("auth",),
        "command": ("cmd",),
        "package": ("pkg",),
        "library": ("lib",),
        "configuration": ("config", "cfg", "conf"),
        "dictionary": ("dict",),
        "string": ("str",),
        "integer": ("int",),
        "boolean": ("bool",),
        "address": ("addr",),
        "index": ("idx",),
        "implementation": ("impl",),
    }
)

# Words code uses for one another's meaning: a question says "combined" where the code says
# ``merge_*``, "stops" where it calls ``terminate()``. Hand-written groups of verbs that
# programmers use interchangeably in names (general English programming vocabulary, no
# project's; the two-way pairs of ``SYNONYMS`` among them), asked of the index and counted in
# a function's share of a one-line question at a lower weight than the word itself
# (``IndexTuning.synonym_weight``). Words that are also everyday function words (``get``,
# ``set``, ``new``, ``make``) are left out: asked, they match every name.
_THESAURUS_GROUPS = (
    "combine merge join concat",
    "remove delete drop discard",
    "check validate verify",
    "save store persist",
    "stop halt terminate",
    "start begin launch",
    "find search lookup locate",
    "compute calculate",
    "convert transform",
    "skip ignore",
    "copy clone duplicate",
    "show display render",
    "resume restore",
    "split partition",
    "fill populate",
    "suggest recommend",
)
THESAURUS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        word: tuple(other for other in group.split() if other != word)
        for group in _THESAURUS_GROUPS
        for word in group.split()
    }
)

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_NUMBERED = re.compile(r"\b([A-Za-z]{2,})[ \t-](\d{1,5})\b")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]")
_CAPITALISED = re.compile(r"[A-Z][a-z]+[A-Z]\w*")
# A capital after a number inside a word: ``S3Backend``, ``EC2Backend``, ``Base64Encoder``.
_DIGIT_CAPITAL = re.compile(r"[A-Za-z]\d+[A-Z]")
# Whole words only, taken possessively: a search (not only a fullmatch) stays linear, where
# retrying a long word from each of its letters was quadratic (bench/studies/rewrite_hostile.py).
_DOTTED_NAME = re.compile(r"(?<!\w)[A-Za-z_]\w*+(?:(?:\.|::)[A-Za-z_]\w*+)+(?:\(\))?")
_LOWER_PAIR = re.compile(r"(?<![a-z])[a-z]++\.[a-z]+")
# Inflections first, then one derivation: "rendered" -> "render" -> "rend", as "render" ->
# "rend". One pass over a single list left "rendered" at "render" and "render" at "rend", so a
# question about something "rendered" never met a function named ``render`` (askama), nor
# "filtered" ``filter``, "registered" ``register``, "ordered" ``order``.
_INFLECTIONS = (
    ("ings", ""),
    ("ing", ""),
    ("ies", "y"),
    ("ied", "y"),
    ("ed", ""),
    ("es", ""),
    ("s", ""),
    ("ly", ""),
)
# "-tion" and "-sion" after the verb's own last letter ("suggestion" -> suggest, "selection" ->
# select, "compression" -> compress, "deletion" -> delet as "delete"): the noun of a verb
# that does not take "-ation", which a question says where the code names the verb, and the
# other way round ("how does clap suggest a similar flag" against ``suggestions.rs``).
_DERIVATIONS = (
    ("ization", "iz"),
    ("isation", "is"),
    ("ation", "at"),
    ("tion", "t"),
    ("sion", "s"),
    ("ment", ""),
    ("er", ""),
)


def words(text: str) -> list[str]:
    """Alphanumeric words in order, as written."""
    return _WORD.findall(text)


def content_stems(text: str) -> frozenset[str]:
    """The stems of ``text``'s words, stop words left out: what a question asks, as the key
    a function's name is compared with (``name_stems``)."""
    return frozenset(stem(w) for w in words(text.lower())) - _STOP_STEMS


def name_stems(name: str) -> frozenset[str]:
    """The stems of a name's subwords (``_create_underlying_bucket`` -> create, underlying,
    bucket, stemmed), to set beside a question's ``content_stems``."""
    return frozenset(stem(w) for w in subwords(name) if w)


def numbered(text: str) -> list[tuple[str, str]]:
    """(word, number) pairs the text writes apart: "RFC 3339", "SHA-256"."""
    return _NUMBERED.findall(text)


def subwords(name: str) -> list[str]:
    """``parse_HTTPHeader2`` -> ``["parse", "http", "header", "2"]`` (lower case). One pass
    over the whole name: ``_CAMEL`` never takes an underscore, nor looks past one, so its
    pieces are those of each part between underscores (a tree's vocabulary, 45,000 names
    on the stdlib, is split on its first search)."""
    return [piece.lower() for piece in _CAMEL.findall(name)]


# Irregular past forms of verbs that name what code does: no suffix leads from ``written`` to
# ``write``, so "how are data elements written to a file?" (pydicom) mapped onto reading
# functions, none named ``write_*``. Left out: forms an issue text uses for the reporter's
# story or a symptom more than for what code does ("I ran", "it took", "given a list", "is
# broken", "was thrown", "lost"), forms that are other words ("left", "found", "bound"), and
# verbs in STOP_WORDS or GENERIC_WORDS (got, made, done).
IRREGULAR_FORMS: Mapping[str, str] = MappingProxyType(
    {
        form: base
        for base, forms in {
            "write": "written wrote overwritten overwrote rewritten rewrote",
            "build": "built rebuilt",
            "send": "sent resent",
            "show": "shown",
            "hide": "hidden hid",
            "choose": "chosen chose",
            "draw": "drawn drew redrawn",
            "freeze": "frozen froze",
            "hold": "held",
            "keep": "kept",
            "begin": "begun began",
            "seek": "sought",
            "feed": "fed",
            "spin": "spun",
        }.items()
        for form in forms.split()
    }
)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude, deterministic suffix stripper: ``inserted``/``insert``, ``edges``/``edge``;
    irregular verbs by a table (``written``/``write``)."""
    w = word.lower()
    w = _undouble(_strip(IRREGULAR_FORMS.get(w, w), _INFLECTIONS))
    w = _strip(w, _DERIVATIONS)
    if w.endswith("er"):
        w = _strip(w, _DERIVATIONS)  # "renderer" -> "render" -> "rend"
    w = _undouble(w)
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]  # "validate" and "validation" both end as "validat"
    return w


def _undouble(w: str) -> str:
    """``mapp`` (from mapping) -> ``map``, ``inferr`` (from inferred) -> ``infer``."""
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        return w[:-1]
    return w


def _strip(w: str, suffixes: tuple[tuple[str, str], ...]) -> str:
    """``w`` without the first of ``suffixes`` it ends with, if 3 letters stay ("ss" kept)."""
    for suffix, replacement in suffixes:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith("ss"):
            return w[: -len(suffix)] + replacement
    return w


# Inflections a base form is not read from: an adverb's "ly" (``properly`` asks for no
# ``proper``), and "ings", read as a plural "s" (``settings`` -> setting, the name code writes).
_NOT_A_BASE = frozenset({"ly", "ings"})
_E_DROPPED = frozenset({"ing", "ed", "es"})  # "parsing" -> parse, "caches" -> cache
_DOUBLED = frozenset({"ing", "ed"})  # "stopped" -> stop


def base_forms(word: str) -> tuple[str, ...]:
    """What an inflected English word may be the form of, for an index of the words code
    spells (``stem``'s inflection table, read as spellings rather than a key): ``rendered``
    -> render, rendere; ``parsing`` -> pars, parse; ``stopped`` -> stopp, stoppe, stop;
    ``entries`` -> entry; ``caches`` -> cach, cache. Spellings no document holds match
    nothing. Words under 5 letters, bases under 3 and a plural "s" after "ss", "us", "is"
    (``status``, ``analysis``) are left out."""
    w = word.lower()
    if len(w) < 5 or not w.isalpha():
        return ()
    for suffix, replacement in _INFLECTIONS:
        if suffix in _NOT_A_BASE or not w.endswith(suffix):
            continue
        if suffix == "s" and w.endswith(("ss", "us", "is")):
            return ()
        base = w[: -len(suffix)] + replacement
        found = [base]
        if suffix in _E_DROPPED:
            found.append(base + "e")
        if suffix in _DOUBLED and len(base) > 1 and base[-1] == base[-2]:
            found.append(base[:-1])
        return tuple(f for f in dict.fromkeys(found) if len(f) >= 3 and f != w)
    return ()


# Suffixes of the nouns a verb is written as (``derived_forms``), which ``stem`` reads back to
# the verb: "improvement", "validation", "allocation". Not "er": a trainer, a loader, a
# handler is a thing of its own, named in many more places than the act ("training",
# "loading") a question asks about. Not the inflections ("improves", "improved"): asked at
# the base form's share they moved two Answers of the everyday set's titles away from their
# gold and none to it (bench/results/2026-11-30-answer8/).
_SPELLED = ("ment", "ments", "ion", "ions", "ation", "ations")


def derived_forms(word: str) -> tuple[str, ...]:
    """The nouns of ``word`` that ``stem`` reads as the same word, made from its base forms
    with the suffixes of ``_SPELLED`` (a final "e" dropped before a vowel): "improving" ->
    improvement, improvements; "validated" -> validation. The index's body
    and docstring words are not stemmed (``cq/index/schema.py``: a stemming analyzer made the
    first build several times slower), so a question saying "stops improving" never met
    ``EarlyStopping``'s docstring, which says "no improvement": asking the spellings is the
    stemming done on the query's side. Spellings no document holds match nothing. Words under
    5 letters are left out, as in ``base_forms``."""
    w = word.lower()
    if len(w) < 5 or not w.isalpha():
        return ()
    key = stem(w)
    found = [
        (base[:-1] if base.endswith("e") and suffix[0] in "aeio" else base) + suffix
        for base in (w, *base_forms(w))
        for suffix in _SPELLED
    ]
    return tuple(f for f in dict.fromkeys(found) if f != w and stem(f) == key)


def is_code_like(token: str) -> bool:
    """snake_case, camelCase, CamelCase with inner capitals (after a number too: ``S3Backend``),
    dotted names, calls, ``::`` paths."""
    core = token.strip("`'\",;:!?()[]{}<>")
    if not core:
        return False
    if "_" in core.strip("_") and _WORD.search(core):
        return True
    if _INNER_CAPITAL.search(core) or _CAPITALISED.fullmatch(core) or _DIGIT_CAPITAL.search(core):
        return True
    if _DOTTED_NAME.fullmatch(core):
        return not _LOWER_PAIR.fullmatch(core) or "(" in core or "::" in core
    return token.endswith("()") and len(token) > 2


_STOP_STEMS = frozenset(stem(w) for w in STOP_WORDS)
