"""Conversation context: what "it" refers to.

With ``--follow-up`` the primary symbol of each search is kept per root in the cq cache
(never in the searched tree), and the next follow-up question that refers back ("where is it
called?") searches that symbol. ``--context TEXT`` supplies the referent explicitly: the
first name the text mentions that the repository defines (else the first code-like name).
"""

from __future__ import annotations

import re
from pathlib import Path

from cq.cache.keys import root_key
from cq.cache.payloads import PayloadCache
from cq.rewrite.extract import extract_mentions, split_dotted
from cq.rewrite.vocabulary import Vocabulary
from cq.rewrite.words import PRONOUNS, words


def refers_back(query: str) -> bool:
    """True when the query uses a pronoun that needs an antecedent."""
    return bool(PRONOUNS & {w.lower() for w in words(query)})


def subject_from_context(context: str, vocabulary: Vocabulary) -> str | None:
    """The first name the context mentions whose last part the tree defines, as mentioned
    (``Schema.dump`` keeps its owner), else the first name's last part."""
    mentions = extract_mentions(context)
    names = [*mentions.prose_names, *mentions.code_names]
    defined = [n for n in names if vocabulary.defines(split_dotted(n)[-1])]
    return (defined or [split_dotted(n)[-1] for n in names] or [None])[0]


def recall_subject(root: Path) -> str | None:
    """``root``: its real path, as every stage sees it (``cq.settings.settle``)."""
    key = root_key(str(root))
    return _memory().get_many([key]).get(key)


def remember_subject(root: Path, symbol: str) -> None:
    """Keep ``symbol``, a name or a dotted one (``Schema.load``, ``Utc::now``), for the next
    follow-up's "it"."""
    if all(part.isidentifier() for part in split_dotted(symbol)):
        memory = _memory()
        memory.add(root_key(str(root)), symbol)
        memory.flush()


_IT = re.compile(r"\bit\b", re.IGNORECASE)
_ITS = re.compile(r"\bits\b", re.IGNORECASE)
_PRONOUN = re.compile(r"\b(?:it|this|that|these|those|them|they)\b", re.IGNORECASE)


def written_in(text: str, subject: str) -> str:
    """``text`` with its "it" (else its "its", else another pronoun) replaced by ``subject``
    written as code: "who calls it?" -> "who calls `Schema.load`?"."""
    it = _IT.search(text)
    if it is not None:
        return f"{text[: it.start()]}`{subject}`{text[it.end() :]}"
    its = _ITS.search(text)
    if its is not None:
        return f"{text[: its.start()]}`{subject}`'s{text[its.end() :]}"
    return _PRONOUN.sub(f"`{subject}`", text, count=1)


def _memory() -> PayloadCache[str]:
    """Each root's last answer (the cache is never switched off for it: ``--follow-up`` asks
    for it explicitly)."""
    return PayloadCache("rewrite-follow-up", str, ("cq.rewrite.memory",))
