"""What a one-line question asks about, beyond its words.

Who calls a function ("who calls build_graph", "where is it called?", "callers of X", "call
sites of X"): the rewriter then looks for the named function alone (``offline.py``), the
ranking and the report answer with its calls (``cq.rank.questions``). A name itself ("where
is SlidingWindowInferer defined?", "how is Vocabulary used?"): the report's Answer is that
name's definition (``cq.assemble``), not the best function about the question's words; one
written as code ("how does `Arg::new` work?", "what does Client.send do?") is searched as
that name, as if it were the query. Nothing at all ("who calls?"): the index is not asked
to guess (``cq.index``). ``question.py`` reads a query with these once, into its ``Question``.
"""

from __future__ import annotations

import re
from typing import Literal

import msgspec

from cq.rewrite.extract import split_dotted
from cq.rewrite.words import QUESTION_WORDS, RECEIVERS, STOP_WORDS, is_code_like

_CALLERS = re.compile(
    r"\b(?:who|what|where|which)\b.*\bcall(?:s|ed|ing)?\b|\bcallers?\b|\bcall ?sites?\b", re.I
)


def asks_for_callers(query: str) -> bool:
    """Whether the query asks who calls a function."""
    return _CALLERS.search(query) is not None


def one_line_callers_question(query: str) -> bool:
    """A question of one line that asks who calls a function: it names what it asks about.
    An issue text saying "where the hook is called twice" in its fourth line is not one
    (8 of the 458 tuning texts match ``asks_for_callers`` somewhere, none in their title)."""
    return one_line(query) and asks_for_callers(query)


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TOKEN = re.compile(r"\S+")
_PLAIN_NAME = re.compile(r"[^\W\d]\w*")
# What a question about a name itself says besides the name: STOP_WORDS (which hold "use",
# "used", "uses", "how", "where", "what", ...) and these: "where's" is "where" and "s"; "the
# MetaTensor class" names what kind of name it is.
_ABOUT_A_NAME = STOP_WORDS | frozenset(
    re.findall(
        r"\w+",
        """define defined definition declared declaration implemented implementation work works
        working mean means meaning return returns do find show live lives located location
        come comes called named s class classes function func method struct enum trait type
        types def fn impl""",
    )
)
# A question with nothing to look for says only those and words about calls.
_NOTHING = _ABOUT_A_NAME | frozenset(
    {"call", "calls", "called", "calling", "caller", "callers", "site", "sites"}
)


def names_asked_about(query: str) -> frozenset[str]:
    """The names a one-line question asks about themselves ("where is X defined?", "how is
    X used?", "what does X do?"): the identifier it writes when every other word is in
    ``_ABOUT_A_NAME``; empty for any other query."""
    if not one_line(query):
        return frozenset()
    words = _WORD.findall(query)
    names = frozenset(w for w in words if w.lower() not in _ABOUT_A_NAME)
    if len(names) == 2 and _DEFINED & {w.lower() for w in words}:
        # "where's the EarlyStopping handler defined?", "where is the Nested field class?": a
        # name (written as code, or capitalised inside the sentence) and one plain word
        # saying what kind of thing it is, in a question about where it is defined
        code = [w for w in names if is_code_like(w) or (w[:1].isupper() and w != words[0])]
        if len(code) == 1 and all(w.islower() for w in names - set(code)):
            return frozenset(code)
    return names if len(names) == 1 and len(words) > 1 else frozenset()


# Words of a question about where a name is defined, or what kind of name it is
_DEFINED = frozenset(
    {"define", "defined", "definition", "declared", "declaration", "class", "struct", "enum"}
    | {"trait", "function", "method"}
)


_ASKED_CHARS = 200  # hand-set: a question about one name is short; longer text is a report
# A name written as code: in backticks, or qualified (``Client.send``, ``Arg::new``), with
# an optional call's parentheses (``parse_args()``)
_CODE_NAME = re.compile(
    r"`\s*(?P<quoted>[^\W\d]\w*(?:(?:\.|::)[^\W\d]\w*)*)\s*(?:\(\s*\))?\s*`"
    r"|(?P<qualified>\b[^\W\d]\w*(?:(?:\.|::)[^\W\d]\w*)+)(?:\(\s*\))?"
)


# What a question about a name's uses says: "where is X used?", "where is X imported?",
# "what references X?", "usages of X", "where is X instantiated / raised / caught?".
_IMPORTS = frozenset({"import", "imports", "imported", "importing"})
_INSTANCES = frozenset(
    {"instantiate", "instantiates", "instantiated", "instantiating", "constructed", "created"}
)
_RAISES = frozenset({"raise", "raises", "raised", "throw", "throws", "thrown"})
_CATCHES = frozenset({"catch", "catches", "caught", "handled"})
# "who implements X?", "implementors of X": the types implementing a trait (``impl X for T``)
_IMPLEMENTS = frozenset(
    {"implement", "implements", "implementing", "implementor", "implementors"}
    | {"implementer", "implementers"}
)
# "where is the X trait implemented?", "implementations of the X interface": "implemented"
# alone asks where a function is written, a definition
_IMPLEMENTED = frozenset({"implemented", "implementation", "implementations"})
_ABSTRACT = frozenset({"trait", "traits", "interface", "interfaces", "protocol", "abc"})
# "what subclasses X?", "which classes inherit from X?": ``class T(X)``
_SUBCLASSES = frozenset(
    {"subclass", "subclasses", "subclassed", "subclassing", "inherit", "inherits"}
    | {"inherited", "inheriting", "extends"}
)
_USES = (
    _IMPORTS
    | _INSTANCES
    | _RAISES
    | _CATCHES
    | _IMPLEMENTS
    | _SUBCLASSES
    | frozenset(
        {"use", "uses", "used", "using", "usage", "usages", "reference", "references", "referenced"}
    )
)
_AROUND_A_NAME = _NOTHING | _USES | frozenset({"places", "place", "list", "sites"})
# Which uses each word asks for, first match wins (a word of none: every use).
NameAsk = Literal[
    "definition",
    "uses",
    "imports",
    "instances",
    "raises",
    "catches",
    "implements",
    "subclasses",
    "callers",
]
_USE_KINDS: tuple[tuple[frozenset[str], NameAsk], ...] = (
    (_IMPLEMENTS, "implements"),
    (_SUBCLASSES, "subclasses"),
    (_IMPORTS, "imports"),
    (_INSTANCES, "instances"),
    (_RAISES, "raises"),
    (_CATCHES, "catches"),
)
# A usage question confined to a place: "... imported in the torch models", "... used in the
# linter package": one to three words naming directories, an optional word saying so.
_WITHIN = re.compile(
    r"\s+in\s+(?:the\s+)?(?P<place>[^\W\d][\w-]*(?:\s+[^\W\d][\w-]*){0,2}?)"
    r"(?:\s+(?:package|module|modules|directory|folder|dir|code))?\s*\??\s*$",
    re.I,
)


# A module named in words in a usage question ("where is the suggestions module used?"): its
# name is a plain word, and the word after it says it is a name, as code's shape says it of
# others ("how does the parser module work?" stays a question about what code does)
_MODULE_NAMED = re.compile(r"\bthe\s+(?P<name>[^\W\d]\w*)\s+(?:module|crate|package)\b", re.I)


class NameQuestion(msgspec.Struct, frozen=True):
    """A one-line question about one name written as code: ``name`` as the query would be
    typed (``Arg::new``, ``FakeBucket.create``, ``S3Backend``), what it asks of it, and for a
    usage question the words of the place it is confined to (``within``)."""

    name: str
    asks: NameAsk
    within: tuple[str, ...] = ()


def name_question(query: str) -> NameQuestion | None:
    """The name a one-line question asks about, when it writes exactly one name as code (in
    backticks, qualified, or shaped like code: ``S3Backend``, ``build_graph``, ``getBucket``)
    and every other word only says what it asks: its definition ("where is S3Backend
    defined?", "how does `Arg::new` work?"), its callers ("who calls Parser.parse?"), its
    uses or imports ("where is S3Backend imported?"). None for any other query: a plain
    word ("where is Vocabulary defined?") is ``names_asked_about``'s, rewritten, unless a
    usage question writes it capitalized ("where is Styles used?": the rewrite would answer
    with its definition, a usage question with its uses)."""
    if not one_line(query) or len(query) > _ASKED_CHARS:
        return None
    found = _one_code_name(query)
    plain = found is None
    if found is None:
        found = _capitalized_name(query)
    if found is None:
        return None
    name, start, end, qualified = found
    end = _past_generics(query, end)  # "where is DateTime<Tz> defined?": about DateTime
    after = query[end:]
    place = _WITHIN.search(after)
    within: tuple[str, ...] = ()
    if place is not None:
        before = {w.lower() for w in _WORD.findall(query[:start] + " " + after[: place.start()])}
        if before & _USES:  # a usage question: its place is no word of what it asks
            within = tuple(w.lower() for w in _WORD.findall(place["place"]))
            after = after[: place.start()]
    words = [w.lower() for w in _WORD.findall(query[:start] + " " + after)]
    if not words or any(w not in _AROUND_A_NAME for w in words):
        return None
    callers = asks_for_callers(query)
    if not callers and any(w not in _ABOUT_A_NAME | _USES for w in words):
        return None  # "called" alone ("where is X called?") is a callers question
    parts = split_dotted(name)
    if parts[0] in RECEIVERS:  # "what does self.run do?": the method, wherever it is
        parts = parts[1:]
    if not parts or (qualified and min(len(p) for p in parts) < 2):
        return None  # "e.g.", "i.e.": prose, not a path
    asks: NameAsk = "callers" if callers else _asks(set(words))
    if plain and asks in ("callers", "definition"):
        return None  # the rewrite reads its spellings (``vocabulary``, ``Vocabulary``)
    within = within if asks not in ("callers", "definition") else ()
    return NameQuestion(".".join(parts) if "." in name else "::".join(parts), asks, within)


_TYPE_ARGUMENT = re.compile(r"[\w\s,:'&*\[\];()]")  # what a type's <...> may hold


def _past_generics(query: str, end: int) -> int:
    """Where a name's type arguments written right after it end (``DateTime<Tz>``,
    ``HashMap<K, Vec<V>>``): the type, not more words; ``end`` when none are."""
    if query[end : end + 1] != "<":
        return end
    depth = 0
    for i in range(end, len(query)):
        ch = query[i]
        if ch in "<>":
            depth += 1 if ch == "<" else -1
            if not depth:
                return i + 1
        elif not _TYPE_ARGUMENT.fullmatch(ch):
            break
    return end


def _asks(words: set[str]) -> NameAsk:
    """What a question about a name asks of it, by the words around the name."""
    if _IMPLEMENTED & words and _ABSTRACT & words:
        return "implements"
    for said, asks in _USE_KINDS:
        if said & words:
            return asks
    return "uses" if _USES & words else "definition"


def code_name_asked_about(query: str) -> str | None:
    """The name whose definition a one-line question asks about (``name_question``): "how
    does `Arg::new` work?" -> ``Arg::new``, "where is S3Backend defined?" -> ``S3Backend``;
    None for a question about its callers or uses, and for any other query."""
    asked = name_question(query)
    return asked.name if asked is not None and asked.asks == "definition" else None


def _capitalized_name(query: str) -> tuple[str, int, int, bool] | None:
    """The one word after the first that is capitalized as a class is (``Styles``, ``Config``,
    not ``JSON``), where it is; None for none or several. English capitalizes no word inside
    a question but a name: a user writing one so names a thing of the code."""
    found = [
        m
        for m in _WORD.finditer(query)
        if m.start() > 0 and m.group()[0].isupper() and not m.group().isupper()
    ]
    if len(found) != 1:
        return None
    m = found[0]
    return m.group(), m.start(), m.end(), False


def _one_code_name(query: str) -> tuple[str, int, int, bool] | None:
    """The one name ``query`` writes as code, where it is and whether it is qualified: in
    backticks or qualified (``_CODE_NAME``), else the one token shaped like code."""
    found = list(_CODE_NAME.finditer(query))
    if len(found) > 1:
        return None
    if found:
        m = found[0]
        return m["quoted"] or m["qualified"], m.start(), m.end(), m["qualified"] is not None
    shaped = [m for m in _TOKEN.finditer(query) if is_code_like(m.group())]
    used = _USES & {w.lower() for w in _WORD.findall(query)}
    module = _MODULE_NAMED.search(query) if used and not shaped else None
    if module is not None:  # "the suggestions module" used: its name needs no code shape
        return module["name"], module.start("name"), module.end(), False
    if len(shaped) != 1:
        return None
    token = shaped[0]
    name = _PLAIN_NAME.search(token.group())
    if name is None:
        return None
    return name.group(), token.start() + name.start(), token.start() + name.end(), False


def says_nothing(query: str) -> bool:
    """A one-line question whose every word is in ``_NOTHING`` ("who calls?", "where is
    defined?"): nothing in it to look for, so nothing is guessed."""
    return one_line(query) and all(w.lower() in _NOTHING for w in _WORD.findall(query))


# A question about making an object: its constructor may well be the answer.
_CONSTRUCTION = re.compile(
    r"\b(?:construct\w*|initiali[sz]\w*|init|instantiat\w*|creat\w*)\b", re.I
)
_ASKING = frozenset({"how", "what", "where", "why", "which", "who"})


def asks_about_behaviour(query: str) -> bool:
    """A one-line question led by a question word ("how does ...", "what happens when ...",
    "when a user asks for ..., how is ...?") or asking one ("in the derive macro, how does
    ...?"), not about how an object is made: what it asks is done by code that runs, not by
    a constructor storing its arguments. An issue title is a statement, even when it ends in
    "?" ('"keep_size" should default to True?') or opens with a condition ("When extracting
    an archive fails, it corrupts the cache")."""
    words = _WORD.findall(query)
    if not one_line(query) or not words or _CONSTRUCTION.search(query):
        return False
    first, asked = words[0].lower(), query.rstrip().endswith("?")
    if first in QUESTION_WORDS:
        return first != "when" or asked
    # "in the derive macro, how does ...?", "In what order are ... consulted?"
    return asked and any(w.lower() in _ASKING for w in words)


def one_line(query: str) -> bool:
    """A text of one line, blank lines around it aside."""
    return "\n" not in query.strip()
