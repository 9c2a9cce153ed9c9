"""The query read once, into a ``Question`` (``cq.model.question``), at the search's front.

A pure function of the text and the request's few switches (mode, ``--rewrite``, context):
how it is searched (mode, the line rg gets), what it asks (a name's definition, a
function's callers, a question, a pasted issue) and whether it is rewritten first. The
readers of the text themselves are ``asks.py`` (callers, the name asked about) and
``heuristic.py`` (natural language or code).
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
from cq.rewrite.memory import refers_back
from cq.rewrite.template import without_environment
from cq.rewrite.words import QUESTION_WORDS, content_stems

# A dotted name such as ``store.insert_call``; ``\w`` is Unicode-aware, like Python identifiers.
_IDENTIFIER = re.compile(r"[^\W\d]\w*(?:(?:\.|::)[^\W\d]\w*)*")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def question_of(request: SearchRequest, tuning: RewriteTuning | None = None) -> Question:
    """The request's query understood, with its switches (``understand``) and where "it"
    may find its antecedent (``--context``, ``--follow-up``)."""
    question = understand(
        request.query,
        mode=request.mode,
        rewrite=request.rewrite,
        has_context=bool(request.context) or request.follow_up,
        tuning=tuning,
    )
    return msgspec.structs.replace(question, context=request.context, follow_up=request.follow_up)


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
    named_q = name_question(text) if mode is None and rewrite is None else None
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


# A phrase: a sentence of at least this many words (a message is rarely shorter).
_PHRASE_WORDS = 3


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
    if mode is not None or trigger == "forced" or plain < _PHRASE_WORDS:
        return False
    first = _NAME.match(words[0].lower())
    asking = first is not None and first.group() in QUESTION_WORDS
    # a message may ask ("By 'bilnear', did you mean 'bilinear'?"): one quoting a value
    quotes = _QUOTED.search(typed) is not None
    return not asking and (not typed.rstrip().endswith("?") or quotes)


_CLAUSE = re.compile(r"[:;]\s+")  # "lead-in: message", "message; hint"
_QUOTED = re.compile(r"""'[^'\s][^'\n]*'|"[^"\s][^"\n]*"|`[^`\n]+`""")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_SENTENCE_CHARS = 16  # hand-set: a sentence shorter than this is no message of its own


def sentence_patterns(text: str) -> tuple[str, ...]:
    """An rg regex of each sentence of a phrase of several (``Question.sentences``): its
    format string's (``filled_pattern``), else the sentence as written; () for one
    sentence."""
    if len(text) > _FILLED_CHARS:
        return ()
    parts = [p.strip() for p in _SENTENCE_END.split(text.strip())]
    parts = [p for p in parts if len(p) >= _SENTENCE_CHARS and len(p.split()) >= _PHRASE_WORDS]
    if len(parts) < 2:
        return ()
    return tuple(filled_pattern(p) or _REGEX_META.sub(r"\\\1", p) for p in parts)


# What a program fills into a message: a name and its value (``freq_str='3X'``, Python's
# ``{freq_str=}``), a quoted or backticked value, a bracketed list or set of values, a token
# holding a digit, or a name (``text_field_embedder``, ``SimpleTagger``: a parameter's or a
# class's name put into "expected key {name} for {cls}").
_FILLED = re.compile(
    r"""\w+=(?:'[^'\n]*'|"[^"\n]*"|[^\s,;]+)|'[^'\n]*'|"[^"\n]*"|`[^`\n]*`"""
    r"|\[[^\]\n]*\]|\{[^}\n]*\}|\S*\d\S*|\w*(?:[a-z][A-Z]|_[A-Za-z])\w*"
)
_FILLED_CHARS = 300  # hand-set: a message is a line; longer text is no message to rebuild
_REGEX_META = re.compile(r"([\\.+*?()|\[\]{}^$#&~-])")
_BETWEEN = ".{1,60}?"  # a placeholder's text: "{}", "%d", "{len(self.buf)}"
_AFTER_QUOTE = "[\"'`][^\\n]*"  # a quote earlier on the line: inside a string literal


def filled_pattern(text: str) -> str | None:
    """An rg regex finding the format string of a message whose values were filled in: its
    constant runs between wildcards ("len is 2 but advancing by 4" -> ``len is .{1,60}? but
    advancing by``). None when nothing was filled in or too little text is constant."""
    if len(text) > _FILLED_CHARS:
        return None
    runs = _FILLED.split(text.strip())
    if len(runs) < 2:
        return None
    while runs and not runs[0].strip():
        runs.pop(0)
    while runs and not runs[-1].strip():
        runs.pop()
    if not runs:
        return None
    runs[0], runs[-1] = runs[0].lstrip(), runs[-1].rstrip()
    if sum(len(r.strip()) for r in runs) < 12 or max(len(r.strip()) for r in runs) < 8:
        return None
    return _BETWEEN.join(_REGEX_META.sub(r"\\\1", r) for r in runs)


# A label the printer puts before a message, which the format string does not hold: a
# severity ("error: ", "[WARN] ", as clap, rustc, git and logging print them) or an
# exception's class ("ValueError: ", as a traceback's last line prints it), or a level and
# a logger's name ("WARNING:app.db:", Python logging's default format). A severity word with
# neither colon nor brackets is the message's own first word ("Error loading file").
_SEVERITY = r"(?i:error|warning|warn|fatal|panic|critical|info|debug|note|hint)"
_LABEL = re.compile(
    rf"\[{_SEVERITY}\]:?\s+|{_SEVERITY}:\s+|{_SEVERITY}:[\w.]+:\s*"
    r"|[A-Za-z_][\w.]*(?:Error|Exception|Warning):\s+"
)


# A Rust panic as Rust before 1.73 printed it: the message quoted, then where it panicked.
_PANIC = re.compile(r"thread '[^'\n]*' panicked at '(?P<message>.+)'(?:, \S+:\d+:\d+)?")


def unlabelled(text: str) -> str:
    """The message of a pasted line without the label its printer put before it ("error:
    unexpected argument 'x' found" -> "unexpected argument 'x' found"; "thread 'main'
    panicked at 'msg', src/lib.rs:3:9" -> "msg"), when enough is left to be a message (two
    words and ``_SENTENCE_CHARS`` characters); else the line as typed."""
    panic = _PANIC.fullmatch(text.strip())
    if panic is not None:
        rest = panic.group("message")
    else:
        label = _LABEL.match(text.strip())
        rest = text.strip()[label.end() :] if label is not None else ""
    if len(rest.split()) < 2 or len(rest) < _SENTENCE_CHARS:
        return text
    return rest


def message_pattern(typed: str, message: str) -> str | None:
    """``Question.filled`` of a phrase typed as ``typed`` whose message is ``message``
    (``unlabelled``): its format string's regex; for a labelled message with nothing filled
    in ("error: unexpected argument"), the message as written, since the code writes it
    without the label the line was pasted with. None: nothing to search beyond the text."""
    pattern = filled_pattern(message)
    if pattern is None and message != typed:
        return _REGEX_META.sub(r"\\\1", message)
    return pattern


def quoted_runs(text: str) -> tuple[str, ...]:
    """An rg regex of each constant run of a filled-in message (``filled_pattern``'s) and of
    each clause of a run (after a colon or a semicolon) of at least ``_PHRASE_WORDS`` words
    and ``_SENTENCE_CHARS`` characters, longest first, found only after a quote on its line:
    inside a string literal, where a format string is, and not in a comment or prose that
    shares a few words with a title. () when nothing was filled in. A clause is the message a
    wrapper quotes after its own lead-in ("An error occurred (NoSuchBucket) when calling the
    GetObject operation: The specified bucket does not exist": the last clause is the
    tree's)."""
    if len(text) > _FILLED_CHARS or filled_pattern(text) is None:
        return ()
    runs = [r.strip(" ,;:") for r in _FILLED.split(text.strip())]
    runs += [c.strip(" ,;:") for r in runs for c in _CLAUSE.split(r)[1:]]
    long = [r for r in runs if len(r) >= _SENTENCE_CHARS and len(r.split()) >= _PHRASE_WORDS]
    long.sort(key=len, reverse=True)
    escaped = (_REGEX_META.sub(r"\\\1", r) for r in dict.fromkeys(long))
    return tuple(_AFTER_QUOTE + e for e in escaped)


_QUOTE = "[\"'`]"


def end_runs(text: str) -> tuple[str, ...]:
    """An rg regex of each leading run of the phrase's words right after a quote, and of
    each trailing run right before one, longest first (``Question.runs``): a run of at least
    half its words, ``_PHRASE_WORDS`` words and ``_SENTENCE_CHARS`` characters, so that a
    lead-in many messages share ("One or more parameter values were invalid:") is not
    enough. The half is hand-set, not fitted: moto's filled-in messages keep 10 and 11 of
    their 15 and 16 words, and a lead-in is rarely more than a third
    (bench/results/2026-11-29-answer6/). () for a phrase of too few words or over
    ``_FILLED_CHARS``."""
    words = text.split()
    if len(text) > _FILLED_CHARS or len(words) < 2 * _PHRASE_WORDS:
        return ()
    least = max(_PHRASE_WORDS, (len(words) + 1) // 2)
    runs: list[tuple[int, str]] = []
    for k in range(len(words) - 1, least - 1, -1):
        head, tail = " ".join(words[:k]), " ".join(words[-k:])
        if len(head) >= _SENTENCE_CHARS:
            runs.append((len(head), _QUOTE + _REGEX_META.sub(r"\\\1", head)))
        if len(tail) >= _SENTENCE_CHARS:
            runs.append((len(tail), _REGEX_META.sub(r"\\\1", tail) + _QUOTE))
    runs.sort(key=lambda r: -r[0])  # stable: a head before a tail of its length
    return tuple(dict.fromkeys(r for _, r in runs))


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


# A Rust panic as Rust 1.73 and later print it: where, then the message on lines of its own,
# then the hint about backtraces.
_PANICKED_AT = re.compile(r"thread '[^'\n]*' panicked at \S+:\d+:\d+:")
_PANIC_TAIL = ("note: run with `RUST_BACKTRACE", "stack backtrace:")


def _panic_message(lines: list[str]) -> str | None:
    """The message of a pasted Rust panic whose message is one line; None for anything else."""
    if len(lines) < 2 or _PANICKED_AT.fullmatch(lines[0].strip()) is None:
        return None
    message = [ln.strip() for ln in lines[1:]]
    for at, line in enumerate(message):
        if line.startswith(_PANIC_TAIL):
            message = message[:at]
            break
    return message[0] if len(message) == 1 and message[0] else None


def _typed_line(query: str, mode: QueryMode) -> str | None:
    """The query as typed, for rg, which matches one line at a time: blank lines around it (a
    paste) are dropped; a text of several lines (a pasted issue) is no pattern of its own (the
    rewriter reads it), and a regex of several lines is refused rather than handed to rg."""
    lines = query.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    panicked = _panic_message(lines)
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
