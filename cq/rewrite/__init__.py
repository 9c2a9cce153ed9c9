"""Natural-language queries -> identifier and literal patterns (heuristic, offline, LLM).

In: a ``Question`` (``question.py`` reads the query into one) whose text reads as English
or is a pasted issue, and the search's ``Scope``. Out: a ``Rewrite`` (``plan.py``: patterns
for the one rg run, a focus, path hints for the ranking, a ``RewriteSummary``).

Open ``question.py`` (the query read once into a ``Question``: mode, intent, the name asked
about, whether to rewrite) and ``run.py`` first. ``asks.py`` reads what a question asks,
``heuristic.py`` whether it reads as prose, ``extract.py`` finds the code the text names
(``paths.py``: the files it names), ``offline.py`` maps the rest onto ``vocabulary.py``'s
defined names, ``llm.py`` asks a model (``post.py``: one HTTP exchange under a deadline;
``validate.py``: its answer checked; ``caller.py``: a model the caller offers, an MCP
client's), ``memory.py`` resolves "it", ``template.py`` leaves an issue form's environment
sections out, ``words.py`` holds the word lists and the stemmer. ``rewrite_query``,
``defined_names`` and ``remember_primary`` below import what they run on first use: a search
that does not rewrite never loads ``run.py``, the vocabulary or the LLM client.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from cq.model import Finding, Question, Scope
from cq.model.tuning import RewriteTuning
from cq.parse import Listing
from cq.rewrite.asks import asks_about_behaviour
from cq.rewrite.caller import CallerModel, NoAnswer
from cq.rewrite.extract import Mentions, extract_mentions, is_special, split_dotted
from cq.rewrite.heuristic import should_rewrite
from cq.rewrite.names_by_word import NameWords
from cq.rewrite.paths import FileTable, mentioned_parts
from cq.rewrite.plan import Rewrite
from cq.rewrite.question import is_identifier_query, question_of, respelled_as, understand
from cq.rewrite.template import without_environment
from cq.rewrite.words import (
    ABBREVIATIONS,
    FUNCTION_WORDS,
    IRREGULAR_FORMS,
    RECEIVERS,
    STOP_WORDS,
    THESAURUS,
    base_forms,
    content_stems,
    derived_forms,
    name_stems,
    numbered,
    stem,
    subwords,
)

if TYPE_CHECKING:
    from cq.llm_settings import LlmEnv
    from cq.rewrite.vocabulary import Vocabulary

__all__ = [
    "ABBREVIATIONS",
    "FUNCTION_WORDS",
    "IRREGULAR_FORMS",
    "RECEIVERS",
    "STOP_WORDS",
    "THESAURUS",
    "CallerModel",
    "FileTable",
    "Mentions",
    "NameWords",
    "NoAnswer",
    "Rewrite",
    "asks_about_behaviour",
    "base_forms",
    "content_stems",
    "defined_names",
    "definition_site",
    "derived_forms",
    "extract_mentions",
    "followed_subject",
    "is_identifier_query",
    "is_special",
    "mentioned_parts",
    "name_stems",
    "name_words",
    "numbered",
    "question_of",
    "remember_primary",
    "respelled_as",
    "rewrite_query",
    "should_rewrite",
    "split_dotted",
    "stem",
    "subwords",
    "understand",
    "without_environment",
]


def rewrite_query(
    question: Question,
    scope: Scope,
    trigger: str,
    tuning: RewriteTuning,
    listing: Listing | None = None,
    model: CallerModel | None = None,
    llm: LlmEnv | None = None,
    vocabulary: Vocabulary | None = None,
) -> Rewrite:
    """``run.rewrite_query``, imported on first use (the LLM client, TOML and the vocabulary
    cost ~15 ms to import, wasted on a search that does not rewrite)."""
    from cq.rewrite.run import rewrite_query as run

    return run(question, scope, trigger, tuning, listing, model, llm, vocabulary)


def defined_names(
    scope: Scope, listing: Listing | None = None, scanned: Callable[[], None] | None = None
) -> Vocabulary:
    """The tree's defined names and the files defining each (``vocabulary.py``: one rg run,
    cached as the rewriter caches it), imported on first use like ``rewrite_query``;
    ``scanned`` is called once that rg run is over (if there is one)."""
    from cq.rewrite.vocabulary import vocabulary_for

    return vocabulary_for(scope, listing, scanned)


def name_words(vocabulary: Vocabulary) -> NameWords:
    """``vocabulary.name_words``: which of the names hold a word, imported on first use."""
    from cq.rewrite.vocabulary import name_words as words

    return words(vocabulary)


def definition_site(text: str, name: str) -> tuple[int, int, str] | None:
    """``vocabulary.definition_site``: where a file's text first defines ``name``."""
    from cq.rewrite.vocabulary import definition_site as site

    return site(text, name)


def remember_primary(
    root: str,
    findings: tuple[Finding, ...],
    primary: int | None,
    dotted: tuple[str, ...] | None = None,
) -> None:
    """Keep this search's answer for the next question's "it" (``--follow-up``:
    ``memory.py``, imported on first use like ``rewrite_query``): the dotted name the search
    asked for (``dotted``: ``Schema.load``, ``Utc::now``) when the answer is its member, else
    the answer's name."""
    if primary is not None:
        from cq.rewrite.memory import remember_subject

        f = findings[primary]
        name = f.text.split(".")[-1]
        if dotted is not None and dotted[-1] == name:
            name = ("::" if f.language == "rust" else ".").join(dotted)
        remember_subject(Path(root), name)


def followed_subject(question: Question, scope: Scope) -> str | None:
    """The name a question's "it" refers to, to be read as if written in its place: the
    ``--context``'s first name the tree defines, else the last ``--follow-up`` answer (a
    context names "it" anew); None when the question has no "it" or nothing names it.
    The caller reads it as written when the question then asks about that name ("where is
    it used?") or it is dotted (the rewrite searches names, not an owner's member); else it
    is left to the rewrite, as its subject ("how does it handle errors?")."""
    if not question.refers_back or not (question.context or question.follow_up):
        return None
    from cq.rewrite.memory import recall_subject, subject_from_context

    if question.context:
        return subject_from_context(question.context, defined_names(scope))
    return recall_subject(Path(scope.root))
