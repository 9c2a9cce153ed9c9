"""The query read once, into a ``Question`` (``cq.model.question``), at the search's front.

A pure function of the text and the request's few switches (mode, ``--rewrite``, context):
how it is searched (mode, the line rg gets), what it asks (a name's definition, a
function's callers, a question, a pasted issue) and whether it is rewritten first. The
readers of the text themselves are ``asks.py`` (callers, the name asked about),
``heuristic.py`` (natural language or code) and ``message.py`` (a pasted message's patterns).
"""

from __future__ import annotations

import re

import msgspec

from cq.errors import UsageError
from cq.model import Intent, QueryMode, Question, SearchRequest, Trigger
from cq.model.question import Uses
from cq.model.tuning import RewriteTuning
from cq.rewrite.asks import (
    NameQuestion,
    asks_about_behaviour,
    asks_for_callers,
    name_question,
    names_asked_about,
    one_line,
    says_nothing,
)
from cq.rewrite.extract import extract_mentions
from cq.rewrite.heuristic import should_rewrite
from cq.rewrite.memory import refers_back, written_in
from cq.rewrite.message import (
    PHRASE_WORDS,
    QUOTED,
    end_runs,
    message_pattern,
    panic_message,
    panic_place,
    quoted_runs,
    raised_message,
    rustc_subject,
    sentence_patterns,
    unlabelled,
)
from cq.rewrite.template import without_environment
from cq.rewrite.words import QUESTION_WORDS, content_stems

# A dotted name such as ``store.insert_call``; ``\w`` is Unicode-aware, like Python identifiers.
_IDENTIFIER = re.compile(r"[^\W\d]\w*(?:(?:\.|::)[^\W\d]\w*)*")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def question_of(
    request: SearchRequest, tuning: RewriteTuning | None = None, subject: str | None = None
) -> Question:
    """The request's query understood, with its switches (``understand``) and where "it"
    may find its antecedent (``--context``, ``--follow-up``); ``subject``: the dotted name
    its "it" refers to (``cq.rewrite.followed_subject``), read as if written in its place
    ("who calls it?" as "who calls `Schema.load`?"; ``text`` stays as typed)."""
    question = understand(
        request.query if subject is None else written_in(request.query, subject),
        mode=request.mode,
        rewrite=request.rewrite,
        has_context=bool(request.context) or request.follow_up,
        tuning=tuning,
    )
    return msgspec.structs.replace(
        question,
        text=request.query,
        context=request.context,
        follow_up=request.follow_up,
        subject=subject,
    )


def understand(
    text: str,
    *,
    mode: QueryMode | None = None,
    rewrite: bool | None = None,
    has_context: bool = False,
    tuning: RewriteTuning | None = None,
) -> Question:
    """The ``Question`` of ``text`` searched in ``mode`` (None: detected), rewritten when
    ``rewrite`` says so (None: when it reads as prose); ``has_context``: a context or a
    follow-up gives "it" something to refer to. Raises ``UsageError`` for a regex of
    several lines."""
    # A name a question writes as code is searched as if typed, unless told how to search; so
    # is the type a pasted rustc error names (its words are the compiler's, in no file).
    named_q = name_question(text) if mode is None and rewrite is None else None
    if named_q is None and mode is None and rewrite is None:
        subject = rustc_subject(text)
        named_q = NameQuestion(subject, "definition") if subject is not None else None
    asked = named_q.name if named_q is not None else None
    searched = asked or text
    detected = mode or _detect_mode(searched)
    typed = _typed_line(searched, detected)
    callers, about = asks_for_callers(text), names_asked_about(text)
    trigger = _trigger(searched, mode, rewrite, has_context, tuning)
    phrase = asked is None and _is_phrase(typed, mode, trigger)
    body = without_environment(text)
    intent = _intent(text, callers, bool(asked or about), detected, typed, trigger)
    if phrase:
        intent = "phrase"
    elif named_q is not None and named_q.asks not in ("definition", "callers"):
        intent = "usage"
    stems = content_stems(text) if intent == "question" else frozenset()
    message = unlabelled(typed) if phrase and typed is not None else None
    return Question(
        text=text,
        mode_requested=mode,
        mode=detected,
        typed=typed,
        intent=intent,
        asked_name=asked,
        about=about,
        written=frozenset(_NAME.findall(text)),
        callers=callers,
        says_nothing=says_nothing(text),
        named=detected == "identifier" and typed is not None and not rewrite,
        trigger=trigger,
        uses=_uses(named_q),
        within=named_q.within if named_q is not None else (),
        filled=message_pattern(typed, message) if message is not None and typed else None,
        sentences=sentence_patterns(message) if message is not None else (),
        pieces=quoted_runs(message) if message is not None else (),
        runs=end_runs(message) if message is not None else (),
        raised=raised_message(text) if typed is None else None,
        place=panic_place(text) if phrase else None,
        one_line=one_line(text),
        body=body,
        title=next((ln for ln in body.splitlines() if ln.strip()), ""),
        lines=len([ln for ln in body.splitlines() if ln.strip()]),
        mentions=extract_mentions(body),
        behaviour=asks_about_behaviour(text),
        refers_back=refers_back(text),
        stems=stems,
        content=stems if _asks(text) else frozenset(),
    )


def _asks(text: str) -> bool:
    """Led by a question word or ending in "?": a question, not an issue's title, which
    states what goes wrong and names no function by its words alone."""
    first = _NAME.match(text.strip().lower())
    return (first is not None and first.group() in QUESTION_WORDS) or text.rstrip().endswith("?")


def _uses(asked: NameQuestion | None) -> Uses | None:
    if asked is None or asked.asks in ("definition", "callers"):
        return None
    return asked.asks


def _is_phrase(typed: str | None, mode: QueryMode | None, trigger: Trigger | None) -> bool:
    """Several words to find as written: searched -F (never rewritten), or prose that is no
    question (not led by a question word, no "?"): an error message, a log line, a help text
    pasted to find where it comes from."""
    if typed is None:
        return False
    words = typed.split()
    if mode == "literal":
        return len(words) > 1
    plain = sum(1 for w in words if w.strip(".,:;!'\"").isalpha())
    if mode is not None or trigger == "forced" or plain < PHRASE_WORDS:
        return False
    first = _NAME.match(words[0].lower())
    asking = first is not None and first.group() in QUESTION_WORDS
    # a message may ask ("By 'bilnear', did you mean 'bilinear'?"): one quoting a value
    quotes = QUOTED.search(typed) is not None
    return not asking and (not typed.rstrip().endswith("?") or quotes)


def respelled_as(question: Question, name: str) -> Question:
    """``question`` about the name it asked about spelled as the tree defines it (``name``:
    ``get_bucket`` for ``getBucket``, ``cq.ladder``): what it asks of that name, as if
    written so."""
    return msgspec.structs.replace(
        question,
        asked_name=name,
        typed=name,
        about=frozenset({name}),
        written=question.written | {name},
    )


def is_identifier_query(query: str) -> bool:
    """True when the query is one (possibly dotted or ``::``-qualified) identifier."""
    return _IDENTIFIER.fullmatch(query) is not None


def _detect_mode(query: str) -> QueryMode:
    """Identifier when it looks like one, otherwise literal: ``foo()`` and ``a+b`` are text."""
    return "identifier" if is_identifier_query(query.strip()) else "literal"


def _intent(
    text: str,
    callers: bool,
    about_a_name: bool,
    mode: QueryMode,
    typed: str | None,
    trigger: Trigger | None,
) -> Intent:
    if not one_line(text):
        return "issue"
    if callers:
        return "callers"
    if mode == "identifier" and typed is not None:
        return "definition"
    if trigger is None:  # code searched as typed ("a+b" names no name it asks about)
        return "text"
    return "definition" if about_a_name else "question"


def _trigger(
    searched: str,
    mode: QueryMode | None,
    rewrite: bool | None,
    has_context: bool,
    tuning: RewriteTuning | None,
) -> Trigger | None:
    """ "forced" (``--rewrite``), "heuristic" (it reads as prose), or None (searched as
    typed: ``--no-rewrite``, or a mode given, ``-F``, ``--regex``, ``-w``: the user said how
    to search it)."""
    if rewrite is False or (mode is not None and rewrite is None):
        return None
    if rewrite is True:
        return "forced"
    return "heuristic" if should_rewrite(searched, tuning, has_context=has_context) else None


def _typed_line(query: str, mode: QueryMode) -> str | None:
    """The query as typed, for rg, which matches one line at a time: blank lines around it (a
    paste) are dropped; a text of several lines (a pasted issue) is no pattern of its own (the
    rewriter reads it), and a regex of several lines is refused rather than handed to rg."""
    lines = query.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    panicked = panic_message(lines)
    if panicked is not None:
        return panicked
    if len(lines) == 1:
        return lines[0].removesuffix("\r")
    if mode == "regex" and lines:
        raise UsageError(
            "a regex query must be one line: rg matches line by line (the query has "
            f"{len(lines)} lines)"
        )
    return None
