"""A pasted message's patterns: what rg searches to find the code that writes it.

A message a program printed is rarely written whole in its source: its values were filled into
a format string, a printer put a label before it ("error: ", "ValueError: "), a long one is
written as several strings, a wrapper quoted it after its own lead-in. ``Question`` (built in
``cq.rewrite.question``) carries the patterns made here, and ``cq.ladder``'s phrase rung
searches them in turn when the text as typed is only in tests or nowhere.
"""

from __future__ import annotations

import re

# A phrase: a sentence of at least this many words (a message is rarely shorter).
PHRASE_WORDS = 3

_CLAUSE = re.compile(r"[:;]\s+")  # "lead-in: message", "message; hint"
QUOTED = re.compile(r"""'[^'\s][^'\n]*'|"[^"\s][^"\n]*"|`[^`\n]+`""")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_SENTENCE_CHARS = 16  # hand-set: a sentence shorter than this is no message of its own


def sentence_patterns(text: str) -> tuple[str, ...]:
    """An rg regex of each sentence of a phrase of several (``Question.sentences``): its
    format string's (``filled_pattern``), else the sentence as written; () for one
    sentence."""
    if len(text) > _FILLED_CHARS:
        return ()
    parts = [p.strip() for p in _SENTENCE_END.split(text.strip())]
    parts = [p for p in parts if len(p) >= _SENTENCE_CHARS and len(p.split()) >= PHRASE_WORDS]
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
# severity or a hint's ("error: ", "[WARN] ", "tip: ", as clap, rustc, git and logging print
# them) or an
# exception's class ("ValueError: ", as a traceback's last line prints it), or a level and
# a logger's name ("WARNING:app.db:", Python logging's default format). A severity word with
# neither colon nor brackets is the message's own first word ("Error loading file").
_SEVERITY = r"(?i:error|warning|warn|fatal|panic|critical|info|debug|note|hint|tip|help)"
_LABEL = re.compile(
    rf"\[{_SEVERITY}\]:?\s+|{_SEVERITY}:\s+|{_SEVERITY}:[\w.]+:\s*"
    r"|[A-Za-z_][\w.]*(?:Error|Exception|Warning):\s+"
)


# A rustc diagnostic's first line ("error[E0599]: no method named `foo` found for struct `Arg`
# in the current scope"): the compiler's words, which no file of the tree writes; and a name
# it quotes, a reference's or a generic's left out (`&mut Arg`, `Vec<T>`).
_RUSTC = re.compile(r"\s*(?:error|warning)\[E\d{4}\]:\s[^\n]*")
_RUSTC_NAME = re.compile(r"`&?(?:mut\s+)?((?:[A-Za-z_]\w*::)*[A-Za-z_]\w*)(?:<[^`\n]*>)?`")


def rustc_subject(text: str) -> str | None:
    """The name a pasted rustc error is about: the last its first line quotes, the type a
    method was looked for on ("... found for struct `Arg`") or the one name it cannot find
    ("cannot find value `x` in this scope"); None for any other text, and for a diagnostic
    quoting no name ("mismatched types")."""
    first = _RUSTC.match(text)
    if first is None:
        return None
    names = [m.group(1) for m in _RUSTC_NAME.finditer(first.group())]
    return names[-1] if names else None


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
    each clause of a run (after a colon or a semicolon) of at least ``PHRASE_WORDS`` words
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
    long = [r for r in runs if len(r) >= _SENTENCE_CHARS and len(r.split()) >= PHRASE_WORDS]
    long.sort(key=len, reverse=True)
    escaped = (_REGEX_META.sub(r"\\\1", r) for r in dict.fromkeys(long))
    return tuple(_AFTER_QUOTE + e for e in escaped)


_QUOTE = "[\"'`]"


def end_runs(text: str) -> tuple[str, ...]:
    """An rg regex of each leading run of the phrase's words right after a quote, and of
    each trailing run right before one, longest first (``Question.runs``): a run of at least
    half its words, ``PHRASE_WORDS`` words and ``_SENTENCE_CHARS`` characters, so that a
    lead-in many messages share ("One or more parameter values were invalid:") is not
    enough. The half is hand-set, not fitted: moto's filled-in messages keep 10 and 11 of
    their 15 and 16 words, and a lead-in is rarely more than a third
    (bench/results/2026-11-29-answer6/). () for a phrase of too few words or over
    ``_FILLED_CHARS``."""
    words = text.split()
    if len(text) > _FILLED_CHARS or len(words) < 2 * PHRASE_WORDS:
        return ()
    least = max(PHRASE_WORDS, (len(words) + 1) // 2)
    runs: list[tuple[int, str]] = []
    for k in range(len(words) - 1, least - 1, -1):
        head, tail = " ".join(words[:k]), " ".join(words[-k:])
        if len(head) >= _SENTENCE_CHARS:
            runs.append((len(head), _QUOTE + _REGEX_META.sub(r"\\\1", head)))
        if len(tail) >= _SENTENCE_CHARS:
            runs.append((len(tail), _REGEX_META.sub(r"\\\1", tail) + _QUOTE))
    runs.sort(key=lambda r: -r[0])  # stable: a head before a tail of its length
    return tuple(dict.fromkeys(r for _, r in runs))


# A Rust panic as Rust 1.73 and later print it: where, then the message on lines of its own,
# then the hint about backtraces.
_PANICKED_AT = re.compile(r"thread '[^'\n]*' panicked at \S+:\d+:\d+:")
_PANIC_TAIL = ("note: run with `RUST_BACKTRACE", "stack backtrace:")


def panic_message(lines: list[str]) -> str | None:
    """The message of a pasted Rust panic whose message is one line; None for anything else."""
    if len(lines) < 2 or _PANICKED_AT.fullmatch(lines[0].strip()) is None:
        return None
    message = [ln.strip() for ln in lines[1:]]
    for at, line in enumerate(message):
        if line.startswith(_PANIC_TAIL):
            message = message[:at]
            break
    return message[0] if len(message) == 1 and message[0] else None


# A Python traceback pasted whole: its header first, then its frames, then the exception's line
# ("botocore.errorfactory.NoSuchBucket: An error occurred ... does not exist"), the class's
# dotted name before its message.
_TRACEBACK = re.compile(r"\s*Traceback \(most recent call last\):[^\S\n]*\n")
_RAISED_LINE = re.compile(r"[A-Za-z_][\w.]*:\s+(?P<message>\S.*)")


def raised_message(text: str) -> str | None:
    """The message a pasted Python traceback ends with, its exception's class left out: what
    the code that raised it writes, when none of its frames is in the tree (a library's error
    met in the user's program). None for any other text, an issue quoting a traceback after
    its prose included (the issue says more than the message), and for a message too short
    to be one (two words and ``_SENTENCE_CHARS`` characters, as ``unlabelled`` keeps)."""
    if _TRACEBACK.match(text) is None:
        return None
    last = next((ln.strip() for ln in reversed(text.splitlines()) if ln.strip()), "")
    raised = _RAISED_LINE.fullmatch(last)
    if raised is None:
        return None
    message = raised.group("message")
    if len(message.split()) < 2 or len(message) < _SENTENCE_CHARS:
        return None
    return message


# Where a pasted Rust panic says it panicked: "panicked at src/x.rs:3:9:" (since 1.73), or
# "panicked at '<message>', src/x.rs:3:9" (before).
_PANIC_PLACE = re.compile(
    r"thread '[^'\n]*' panicked at (?:'.+', )?(?P<path>[^\s:]+):(?P<line>\d+):\d+:?\s*$", re.M
)


def panic_place(text: str) -> tuple[str, int] | None:
    """The file and line a pasted Rust panic names; None for any other text."""
    place = _PANIC_PLACE.search(text)
    return (place.group("path"), int(place.group("line"))) if place is not None else None


# What a format string fills in: Rust's and Python's "{...}", printf's "%s", "%5.2f"
_PLACEHOLDER = re.compile(r"\{[^{}\n]*\}|%[-#0 +]*\d*(?:\.\d+)?[sdrifgxXoc]")
_LITERAL = re.compile(r"""(?P<q>["'])(?P<body>(?:\\.|(?!(?P=q)).)+)(?P=q)""")


def writes_message(line: str, message: str) -> int | None:
    """Where on ``line`` (a source line) a string literal starts that is the format string of
    ``message``: its constant runs (at least ``_SENTENCE_CHARS`` characters of them) in
    order in the message, whatever was filled in between. None: no literal on the line
    writes it."""
    for literal in _LITERAL.finditer(line):
        runs = _PLACEHOLDER.split(literal.group("body"))
        if sum(len(r.strip()) for r in runs) < _SENTENCE_CHARS:
            continue
        pattern = ".*?".join(re.escape(r) for r in runs)
        if re.search(pattern, message, re.S) is not None:
            return literal.start()
    return None
