"""Should a query be rewritten? A no-I/O guess: natural language or code-like.

Code-like queries (one identifier, ``store.insert_call``, ``insertCall``, a two-word keyword
search) are searched as typed; questions and sentences, and long texts such as pasted issue
reports, are rewritten into identifier and literal patterns first. The thresholds are
``Tuning.rewrite``'s (``question_*``; a long text is one of ``short_question`` characters).
"""

from __future__ import annotations

from cq.model.tuning import RewriteTuning
from cq.rewrite.words import PRONOUNS, QUESTION_WORDS, STOP_WORDS, is_code_like, words


def should_rewrite(
    query: str, tuning: RewriteTuning | None = None, *, has_context: bool = False
) -> bool:
    """True when the query reads as natural language (or refers back, given context)."""
    t = tuning or RewriteTuning()
    text = query.strip()
    if not text:
        return False
    if len(text) >= t.short_question or text.count("\n") >= 2:
        return True  # issue reports, tracebacks, pasted conversations
    tokens = text.split()
    lowered = [w.lower() for w in words(text)]
    if not lowered:
        return False
    first = lowered[0]
    if has_context and first in QUESTION_WORDS and PRONOUNS & set(lowered):
        return True  # "where is it called?" with something for "it" to refer to
    content = [w for w in lowered if w not in STOP_WORDS]
    if first in QUESTION_WORDS and text.endswith("?") and len(content) >= 2:
        return True  # "how does the ProgressBar update?": asked, whatever names it holds
    code_like = sum(is_code_like(t) for t in tokens)
    if code_like and len(tokens) < t.question_code_words:
        return False
    if len(content) < t.question_content_words and first not in QUESTION_WORDS:
        return False
    if first in QUESTION_WORDS and len(content) >= 2:
        return True
    stop_ratio = 1 - len(content) / len(lowered)
    if len(lowered) >= t.question_min_words and stop_ratio > t.question_stop_share:
        return True
    return len(tokens) >= 3 and code_like == 0
