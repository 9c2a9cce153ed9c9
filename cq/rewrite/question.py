"""The query read once, into a ``Question`` (``cq.model.question``), at the search's front.

A pure function of the text and the request's few switches (mode, ``--rewrite``, context):
how it is searched (mode, the line rg gets), what it asks (a name's definition, a
function's callers, a question, a pasted issue) and whether it is rewritten first. The
readers of the text themselves are ``asks.py`` (callers, the name asked about) and
``heuristic.py`` (natural language or code).
"""

from __future__ import annotations

import re

from cq.errors import UsageError
from cq.model import Intent, QueryMode, Question, SearchRequest, Trigger
from cq.model.tuning import RewriteTuning
from cq.rewrite.asks import (
    asks_for_callers,
    code_name_asked_about,
    names_asked_about,
    one_line,
    says_nothing,
)
from cq.rewrite.heuristic import should_rewrite

# A dotted name such as ``store.insert_call``; ``\w`` is Unicode-aware, like Python identifiers.
_IDENTIFIER = re.compile(r"[^\W\d]\w*(?:(?:\.|::)[^\W\d]\w*)*")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def question_of(request: SearchRequest, tuning: RewriteTuning | None = None) -> Question:
    """The request's query understood, with its switches (``understand``)."""
    return understand(
        request.query,
        mode=request.mode,
        rewrite=request.rewrite,
        has_context=bool(request.context) or request.follow_up,
        tuning=tuning,
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
    # A name a question writes as code is searched as if typed, unless told how to search.
    asked = code_name_asked_about(text) if mode is None and rewrite is None else None
    searched = asked or text
    detected = mode or _detect_mode(searched)
    typed = _typed_line(searched, detected)
    callers, about = asks_for_callers(text), names_asked_about(text)
    trigger = _trigger(searched, rewrite, has_context, tuning)
    return Question(
        text=text,
        mode_requested=mode,
        mode=detected,
        typed=typed,
        intent=_intent(text, callers, bool(asked or about), detected, typed, trigger),
        asked_name=asked,
        about=about,
        written=frozenset(_NAME.findall(text)),
        callers=callers,
        says_nothing=says_nothing(text),
        named=detected == "identifier" and typed is not None and not rewrite,
        trigger=trigger,
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
    searched: str, rewrite: bool | None, has_context: bool, tuning: RewriteTuning | None
) -> Trigger | None:
    """ "forced" (``--rewrite``), "heuristic" (it reads as prose), or None (searched as
    typed; ``--no-rewrite``)."""
    if rewrite is False:
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
    if len(lines) == 1:
        return lines[0].removesuffix("\r")
    if mode == "regex" and lines:
        raise UsageError(
            "a regex query must be one line: rg matches line by line (the query has "
            f"{len(lines)} lines)"
        )
    return None
