"""Natural-language queries -> identifier and literal patterns (heuristic, offline, LLM).

In: a ``SearchRequest`` whose query reads as English or is a pasted issue. Out: a ``Rewrite``
(patterns for the one rg run, a focus, path hints for the ranking, a ``RewriteSummary``).
Open ``trigger.py`` and ``run.py`` first (``run`` loads lazily: a plain identifier search
never imports it); ``heuristic.py`` decides whether to rewrite, ``extract.py`` finds the
code the text names, ``offline.py`` maps the rest onto ``vocabulary.py``'s defined names,
``llm.py`` asks a model (``config.py``, ``validate.py``; ``caller.py``: one the caller
offers, an MCP client's), ``memory.py`` resolves "it",
``template.py`` leaves an issue form's environment sections out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cq.model import SearchRequest
from cq.model.tuning import RewriteTuning
from cq.parse import Listing
from cq.rewrite.asks import (
    asks_for_callers,
    code_name_asked_about,
    names_asked_about,
    one_line_callers_question,
    says_nothing,
)
from cq.rewrite.caller import CallerModel, NoAnswer
from cq.rewrite.extract import Mentions, extract_mentions, is_special, split_dotted
from cq.rewrite.heuristic import should_rewrite
from cq.rewrite.plan import Rewrite
from cq.rewrite.template import without_environment
from cq.rewrite.trigger import remember_primary, rewrite_trigger
from cq.rewrite.words import ABBREVIATIONS, IRREGULAR_FORMS, RECEIVERS, numbered, stem, subwords

if TYPE_CHECKING:
    from cq.llm_settings import LlmEnv
    from cq.rewrite.vocabulary import Vocabulary

__all__ = [
    "ABBREVIATIONS",
    "IRREGULAR_FORMS",
    "RECEIVERS",
    "CallerModel",
    "Mentions",
    "NoAnswer",
    "Rewrite",
    "asks_for_callers",
    "code_name_asked_about",
    "defined_names",
    "definition_site",
    "extract_mentions",
    "is_special",
    "names_asked_about",
    "numbered",
    "one_line_callers_question",
    "remember_primary",
    "rewrite_query",
    "rewrite_trigger",
    "says_nothing",
    "should_rewrite",
    "split_dotted",
    "stem",
    "subwords",
    "without_environment",
]


def rewrite_query(
    request: SearchRequest,
    trigger: str,
    tuning: RewriteTuning,
    listing: Listing | None = None,
    model: CallerModel | None = None,
    llm: LlmEnv | None = None,
) -> Rewrite:
    """``run.rewrite_query``, imported on first use (the LLM client, TOML and the vocabulary
    cost ~15 ms to import, wasted on a search that does not rewrite)."""
    from cq.rewrite.run import rewrite_query as run

    return run(request, trigger, tuning, listing, model, llm)


def defined_names(request: SearchRequest, listing: Listing | None = None) -> Vocabulary:
    """The tree's defined names and the files defining each (``vocabulary.py``: one rg run,
    cached as the rewriter caches it), imported on first use like ``rewrite_query``."""
    from cq.rewrite.vocabulary import vocabulary_for

    return vocabulary_for(request, listing)


def definition_site(text: str, name: str) -> tuple[int, int, str] | None:
    """``vocabulary.definition_site``: where a file's text first defines ``name``."""
    from cq.rewrite.vocabulary import definition_site as site

    return site(text, name)
