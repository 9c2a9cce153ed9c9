"""Which of a tree's names hold a word: a vocabulary's names looked up by stemmed subword
(``containing``: ``bucket`` -> ``get_bucket``, ``BucketList``) or written as one stemmed word
(``spelled``: ``tarfil`` -> ``TarFile``), found when a search asks, not indexed ahead.

Indexing every name by its stemmed subwords was most of a first question's or typo's
vocabulary (0.3 of 0.6 s on the stdlib: bench/results/2026-11-30-speed12), for the handful
of words one search asks about. A lookup scans the names' text instead. Every rule of
``stem`` cuts a suffix and puts back a prefix of it ("ization" -> "iz", "tion" -> "t"), or
cuts only, except "ies"/"ied" -> "y" and the irregular forms: so a word whose stem is ``s``
starts with ``s``, or with ``s`` less its final "y", or is one of the ``IRREGULAR_FORMS``
whose stem is ``s`` (``_prefixes``). The names holding such a word hold that prefix in their
lower-case text; ``stem`` then keeps exactly the names an index would have given, in the
same order. Each answer is kept for the life of the process (a server asks again).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterator, Sequence
from functools import cache

from cq.rewrite.words import IRREGULAR_FORMS, stem, subwords

# The letters ``subwords`` reads are ASCII: lowering only those keeps every other character
# as it is, so a name's text less ``_BETWEEN_PIECES`` is its subwords joined (``str.lower``
# turns a Kelvin sign into "k": ``Tar\u212aFile`` would read "tarkfile", not "tarfile").
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
# What ``subwords`` drops between its pieces (underscores, letters outside ASCII): a name
# without them is its pieces joined.
_BETWEEN_PIECES = re.compile(r"[^a-z\d\n]")


class NameWords:
    """Lookups by stemmed word over ``names`` (a vocabulary's, in its order): positions in
    ``names``, ascending, as an index built over them all would list them."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = names
        self._text = "\n".join(names).translate(_ASCII_LOWER)
        lengths = (len(name) + 1 for name in names)
        self._starts = list(itertools.accumulate(lengths, initial=0))[:-1]
        self._joined: tuple[str, list[int]] | None = None
        self._containing: dict[str, tuple[int, ...]] = {}
        self._spelled: dict[str, tuple[int, ...]] = {}
        self._stems: dict[int, frozenset[str]] = {}

    def containing(self, word_stem: str) -> tuple[int, ...]:
        """The names with a subword (two letters or more) whose stem is ``word_stem``."""
        found = self._containing.get(word_stem)
        if found is None:
            candidates = self._candidates(self._text, self._starts, word_stem)
            found = tuple(p for p in candidates if word_stem in self._stems_of(p))
            self._containing[word_stem] = found
        return found

    def get(self, word_stem: str, default: Sequence[int] = ()) -> Sequence[int]:
        """``containing`` as a mapping's ``get`` (``cq.rank.suggest`` reads a mapping)."""
        return self.containing(word_stem) or default

    def spelled(self, word_stem: str) -> tuple[int, ...]:
        """The names of two subwords or more whose subwords written as one word stem to
        ``word_stem``."""
        found = self._spelled.get(word_stem)
        if found is None:
            if self._joined is None:
                text = self._text
                # ASCII names are letters, digits and underscores: one replace, not a regex
                text = text.replace("_", "") if text.isascii() else _BETWEEN_PIECES.sub("", text)
                starts = [0, *(m.end() for m in re.finditer("\n", text))]
                self._joined = (text, starts)
            candidates = self._candidates(*self._joined, word_stem)
            found = tuple(p for p in candidates if _spells(self.names[p], word_stem))
            self._spelled[word_stem] = found
        return found

    def _candidates(self, text: str, starts: list[int], word_stem: str) -> Iterator[int]:
        """Positions of the names whose ``text`` holds one of ``word_stem``'s prefixes."""
        positions: set[int] = set()
        for prefix in _prefixes(word_stem):
            if not prefix:  # a one-letter stem "y": every name
                return iter(range(len(starts)))
            for match in re.finditer(re.escape(prefix), text):
                positions.add(bisect.bisect_right(starts, match.start()) - 1)
        return iter(sorted(positions))

    def _stems_of(self, position: int) -> frozenset[str]:
        stems = self._stems.get(position)
        if stems is None:
            pieces = subwords(self.names[position])
            stems = self._stems[position] = frozenset(stem(p) for p in pieces if len(p) >= 2)
        return stems


def _spells(name: str, word_stem: str) -> bool:
    pieces = subwords(name)
    return len(pieces) > 1 and stem("".join(pieces)) == word_stem


@cache
def _prefixes(word_stem: str) -> tuple[str, ...]:
    """What every word whose stem is ``word_stem`` starts with (see the module's docstring)."""
    regular = word_stem[:-1] if word_stem.endswith("y") else word_stem
    irregular = sorted(f for f in IRREGULAR_FORMS if stem(f) == word_stem)
    return (regular, *(f for f in irregular if not f.startswith(regular)))
