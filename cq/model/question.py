"""What a query asks, read once at the front of a search (``cq.rewrite.question``).

Every stage takes the ``Question`` (or the field it needs) instead of reading the query's
text again: whether it asks for callers, the name it asks about, the line rg searches.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from cq.model.request import QueryMode

# definition: a name ("Client.send", "where is X defined?"); callers: "who calls X?";
# usage: "where is X used?", "where is X imported?"; phrase: a sentence that is no question
# ("The specified bucket does not exist"), or several words searched -F: searched as text
# first, its Answer the code that writes it; question: other one-line prose; issue: a pasted
# text of several lines; text: code that is no name ("foo()", "a+b"), searched as typed.
Intent = Literal["definition", "callers", "usage", "phrase", "question", "issue", "text"]
Trigger = Literal["forced", "heuristic"]
# usage: which uses answer: every use, the imports, the calls making one ("instantiated"), the
# lines raising it, the handlers catching it
Uses = Literal["uses", "imports", "instances", "raises", "catches", "implements", "subclasses"]


class Mentions(msgspec.Struct, frozen=True, kw_only=True):
    """What a text names explicitly, strongest evidence first within each field."""

    frame_functions: tuple[str, ...] = ()  # function names of traceback frames, innermost last
    frame_paths: tuple[str, ...] = ()  # file paths of traceback frames, innermost last
    paths: tuple[str, ...] = ()  # file paths from imports, dotted names and prose
    code_names: tuple[str, ...] = ()  # names from code blocks and imports
    prose_names: tuple[str, ...] = ()  # names in backticks and code-like tokens in the prose
    messages: tuple[str, ...] = ()  # exception messages, quoted phrases (searched as literals)
    frame_lines: tuple[tuple[str, str], ...] = ()  # (path, source line) of frames, innermost last
    prose: str = ""  # the text without code blocks, for word mapping


class Question(msgspec.Struct, frozen=True, kw_only=True):
    """One query, understood. ``text`` is as asked; ``typed`` is what rg searches as typed
    (the one line of the text, or the name a question writes as code: ``asked_name``), None
    for a text of several lines, which only a rewrite searches."""

    text: str
    mode_requested: QueryMode | None  # None: detect it
    mode: QueryMode  # as requested, else detected from ``typed``
    typed: str | None
    intent: Intent
    asked_name: str | None = None  # "how does `Arg::new` work?" -> "Arg::new"
    about: frozenset[str] = frozenset()  # "where is X defined?" -> {"X"}
    written: frozenset[str] = frozenset()  # the identifiers the text writes
    callers: bool = False  # the text asks who calls a function (on any of its lines)
    says_nothing: bool = False  # "who calls?": nothing in it to look for
    named: bool = False  # an identifier searched as typed: only its definition answers
    trigger: Trigger | None = None  # why it is rewritten first; None: searched as typed
    uses: Uses | None = None  # usage: which uses answer (every use, or the imports)
    # usage: the words of a place the question confines its uses to ("where is X imported in
    # the torch models?" -> ("torch", "models")): uses under directories so named come first
    within: tuple[str, ...] = ()
    # a phrase whose numbers and quoted values were filled into a format string ("len is 2
    # but advancing by 4"): an rg regex of its constant runs, searched when it is nowhere
    # verbatim; for a message pasted with its printer's label ("error: ", "ValueError: "),
    # the message's without it (``rewrite.message.unlabelled``); None for any other text
    filled: str | None = None
    # a phrase of several sentences: an rg regex of each (its format string's, as ``filled``,
    # else as written), searched when the whole is nowhere: a program writes a long message
    # as strings on several lines ("... is invalid. " "Reason: ..."), which rg sees apart
    sentences: tuple[str, ...] = ()
    # a filled-in phrase's long constant runs, each an rg regex finding it inside a string
    # (a quote before it on its line), searched when neither ``filled`` nor ``sentences``
    # matched: a format string written as two literals on two lines ("... has bad shape -
    # expected " / "{n} dimensions"), or a value filled in that looks like any word ("Command
    # myapp: ..." from "Command {}: ..."), leaves one run whole on one line
    pieces: tuple[str, ...] = ()
    # a phrase's leading and trailing runs of words (at least half of it), each an rg regex
    # found inside a string literal, longest first: searched when nothing above matched, the
    # longest one found kept: a format string filled with plain words ("Missing the key sk in
    # the item" from "Missing the key {attr} in the item") keeps its head or its tail whole
    runs: tuple[str, ...] = ()
    # a pasted Python traceback's last message, its exception's class left out
    # (``rewrite.message.raised_message``): searched as a phrase first when no frame of the
    # traceback is in the tree (``cq.ladder``); None for any other text
    raised: str | None = None
    # the file and line a pasted Rust panic names (``rewrite.message.panic_place``): the line
    # there answers when the tree holds it and it writes the message (``cq.ladder``)
    place: tuple[str, int] | None = None
    one_line: bool = True  # one line, blank lines around it aside (else an issue text)
    # the text an index and a rewrite read: an issue form's environment sections left out
    # (``cq.rewrite.template``); its first non-blank line is its ``title``
    body: str = ""
    title: str = ""
    lines: int = 1  # non-blank lines of ``body``: fewer than two is a question or a title
    mentions: Mentions = msgspec.field(default_factory=Mentions)  # what ``body`` names as code
    behaviour: bool = False  # a how-question about what code does (``asks_about_behaviour``)
    refers_back: bool = False  # a pronoun ("where is it called?") needs an antecedent
    # where an antecedent may come from: ``--context TEXT`` (its first name the tree defines)
    # and ``--follow-up`` (the previous follow-up search's answer, ``cq.rewrite.memory``)
    context: str | None = None
    follow_up: bool = False
    # the name "it" was read as (--context, --follow-up), written in its place (``asked_name``)
    subject: str | None = None
    # a one-line question's words as stems, stop words left out ("how are buckets created?"
    # -> {"bucket", "creat"}; ``cq.rewrite.words.content_stems``), whether or not it asks as
    # a question does (a line of prose rewritten: "create bucket in region"); empty for any
    # other intent. Assemble's Answer without Relevant Functions prefers a definition named
    # by exactly these words (``cq.assemble.result``)
    stems: frozenset[str] = frozenset()
    # ``stems`` when the line asks (a question word first, or "?"): a function named by
    # exactly these words (``create_bucket``) is what it asks; empty for a title or an issue
    content: frozenset[str] = frozenset()
