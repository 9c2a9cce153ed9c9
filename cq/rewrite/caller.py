"""A model the search's caller offers for the rewrite: an MCP client's, through sampling.

The rewrite asks it what it asks an LLM endpoint, the same prompt, and validates its answer
the same way (``llm.caller_rewrite``); when it gives none, the offline rewrite is used and
the summary says why. Only the caller knows how to reach it, so it comes as a function.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec


class NoAnswer(Exception):
    """The caller's model gave no answer; the message says why, in a few words."""


class CallerModel(msgspec.Struct, frozen=True):
    """``name`` identifies the model's answers (the rewrite cache, the summary's rewriter);
    ``ask(system, user, deadline)`` returns its answer's text by ``time.monotonic()``
    ``deadline`` or raises ``NoAnswer``."""

    name: str
    ask: Callable[[str, str, float], str]
