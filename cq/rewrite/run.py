"""Rewrite and summarise: what the ladder runs once the ``Question``'s ``trigger`` says to
rewrite (or nothing matched).

The LLM is tried when enabled: the model the search's caller offers (an MCP client's), else
the configured endpoint; any failure falls back to the offline rewriter and the summary says
why. The explicit mentions in the text (traceback frames, names in code) are searched
either way: the model adds names, it does not replace what the text says.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from cq.cache.payloads import PayloadCache
from cq.llm_settings import LlmConfig, LlmEnv, load_config
from cq.model import Pattern, Question, RewriteSummary, Scope
from cq.model.tuning import RewriteTuning
from cq.parse import Listing
from cq.rewrite.caller import CallerModel
from cq.rewrite.extract import COMMON_NAMES, split_dotted
from cq.rewrite.llm import LlmUnavailable, caller_rewrite, deadline_of, llm_rewrite, probe
from cq.rewrite.memory import recall_subject, refers_back, subject_from_context
from cq.rewrite.offline import map_words, offline_rewrite
from cq.rewrite.plan import Rewrite, RewritePlan, cap_patterns
from cq.rewrite.validate import ModelAnswer
from cq.rewrite.vocabulary import Vocabulary, vocabulary_for


def rewrite_query(
    question: Question,
    scope: Scope,
    trigger: str,
    t: RewriteTuning,
    listing: Listing | None = None,
    model: CallerModel | None = None,
    llm: LlmEnv | None = None,
    vocabulary: Vocabulary | None = None,
) -> Rewrite:
    """Rewrite the question into patterns; never raises for LLM trouble. It reads the
    question's ``body`` (an issue text's environment and checklist sections left out:
    ``template.py``) and ``mentions``; ``scope``: the search's (``Settings.scope``: its root,
    and the files whose defined names are the vocabulary); ``listing``: the search's list of
    the tree's files (its ``Corpus``'s); ``model``: the caller's, asked instead of the
    configured endpoint; ``llm``: the environment's part of that endpoint (``Settings.llm``,
    read at the search's front; None: no endpoint, the offline rewrite), completed here from
    the user's config file and the repository's opt-out; ``vocabulary``: the scope's, when
    the caller loaded it already (``vocabulary_for``)."""
    root = Path(scope.root)
    if vocabulary is None:
        vocabulary = vocabulary_for(scope, listing)
    subject = _subject(question, root, vocabulary)
    plan = offline_rewrite(question.body, question.mentions, vocabulary, subject, t)
    config = load_config(root, llm) if llm is not None else LlmConfig(enabled=False)
    if config.enabled:
        plan = _with_llm(question, scope.use_cache, config, vocabulary, plan, t, model)
    else:
        plan = msgspec.structs.replace(plan, fallback_reason="llm disabled by config")
    plan = msgspec.structs.replace(plan, subject=subject)
    summary = RewriteSummary(
        applied=bool(plan.patterns),
        trigger=trigger,
        rewriter=plan.rewriter,
        identifiers=tuple(p.text for p in plan.patterns if p.kind == "identifier"),
        literals=tuple(p.text for p in plan.patterns if p.kind == "literal"),
        focus=plan.focus,
        fallback_reason=plan.fallback_reason,
        llm_configured=config.configured,
        subject=subject,
    )
    return Rewrite(plan=plan, summary=summary)


def _subject(question: Question, root: Path, vocabulary: Vocabulary) -> str | None:
    """What "it" refers to: the context's first defined name, else the last follow-up's
    answer. A pronoun counts in the text the rewrite reads (``body``), as ever; the
    ``Question``'s own ``refers_back`` reads the whole text (the Answer's "nothing said
    what 'it' is")."""
    if not refers_back(question.body):
        return None
    if question.context:
        found = subject_from_context(question.context, vocabulary)
        if found:
            return split_dotted(found)[-1]  # the rewrite searches names, not an owner's member
    return recall_subject(root) if question.follow_up else None


def _with_llm(
    question: Question,
    use_cache: bool,
    config: LlmConfig,
    vocabulary: Vocabulary,
    offline: RewritePlan,
    t: RewriteTuning,
    model: CallerModel | None = None,
) -> RewritePlan:
    text, context = question.body, question.context
    source = model.name if model is not None else config.model
    key = msgspec.json.encode([text, context, source, vocabulary.digest])
    store = PayloadCache("rewrite-llm", ModelAnswer, ("cq.rewrite.llm",), enabled=use_cache)
    answer = store.get_many([key.decode()]).get(key.decode())
    if answer is None:
        query = text if not context else f"{context}\n\n{text}"
        try:
            deadline = deadline_of(config)
            if model is None:
                # first: with no server there (the usual case), a refused connect costs less
                # than the prompt's names (_prompt_vocabulary: 22-29 ms for the stdlib's
                # 44,687 once the offline rewrite has mapped the words, 52 ms before)
                probe(config, deadline)
            words = _prompt_vocabulary(text, vocabulary, t)
            if model is not None:
                answer = caller_rewrite(query, model, words, deadline, t)
            else:
                answer = llm_rewrite(query, config, words, deadline, t)
        except LlmUnavailable as exc:
            where = model.name if model is not None else f"{config.provider} at {config.url}"
            return msgspec.structs.replace(offline, fallback_reason=f"llm {where}: {exc}")
        store.add(key.decode(), answer)
        store.flush()
    name = model.name if model is not None else f"{config.provider}:{config.model}"
    return _merge(answer, offline, vocabulary, f"llm:{name}", t)


def _merge(
    answer: ModelAnswer, offline: RewritePlan, vocabulary: Vocabulary, name: str, t: RewriteTuning
) -> RewritePlan:
    """The model's names first (defined ones weigh more), then the text's explicit mentions."""
    patterns = [
        Pattern(
            text=text,
            kind="identifier",
            source=name,
            weight=round(
                (t.llm_defined if vocabulary.defines(text.split(".")[-1]) else t.llm_undefined)
                * (1 - t.llm_rank_decay * rank),
                3,
            ),
        )
        for rank, text in enumerate(answer.identifiers)  # the model lists the best first
        if text.split(".")[-1] not in COMMON_NAMES
    ]
    patterns += [
        Pattern(text=text, kind="literal", source=name, weight=t.llm_literal)
        for text in answer.literals
    ]
    patterns += [p for p in offline.patterns if p.weight >= t.llm_keep_offline]
    focus = answer.focus if answer.focus != "all" else offline.focus
    return RewritePlan(
        patterns=cap_patterns(patterns, t),
        focus=focus,
        path_hints=offline.path_hints,
        rewriter=name,
    )


def _prompt_vocabulary(query: str, vocabulary: Vocabulary, t: RewriteTuning) -> list[str]:
    """Names covering the query's words first, then the rest by how widely they are defined."""
    relevant = [name for name, _ in map_words(query, vocabulary, t)]
    rest = sorted(vocabulary.names, key=lambda n: (-len(vocabulary.names[n]), n))
    return list(dict.fromkeys([*relevant, *rest]))
