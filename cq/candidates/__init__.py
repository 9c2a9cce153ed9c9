"""Candidate phase: run ripgrep and turn its JSON stream into ``RawMatch`` records.

In: a ``Scope`` (the request's root, filters and caps) plus the list of ``Pattern`` to
search. Out: ``Candidates`` (matches in rg's per-file order, per-language ``SearchStats``).
Knows rg and nothing about parsing. Open ``collect.py`` first; ``rg_events.py`` decodes the
stream, ``lines.py`` places each match in its line (lone CRs, undecodable bytes, long lines),
``limits.py`` enforces the caps.
``context.py`` adds the lines around the shown hits (``-A``/``-B``); ``files.py`` lists the
files a search would read (``--files``).
"""

from cq.candidates.collect import Candidates, collect_candidates
from cq.candidates.context import with_context
from cq.candidates.files import searched_files
from cq.candidates.patterns import (
    DOTTED_SOURCE,
    dotted_parts,
    pattern_regex,
    patterns_for_query,
)

__all__ = [
    "DOTTED_SOURCE",
    "Candidates",
    "collect_candidates",
    "dotted_parts",
    "pattern_regex",
    "patterns_for_query",
    "searched_files",
    "with_context",
]
