"""The offline rewriter: explicit code mentions plus the repository's own vocabulary.

No server needed. Names the text mentions (traceback frames, code blocks, backticks, dotted
paths, code-like prose tokens) become identifier patterns, weighted higher when the repository
defines them; the remaining prose words are mapped onto defined names through subwords, stems
and a small synonym table, ranked by how many query words a name covers and how rare those
words are in the vocabulary. File names the text mentions become path hints for the ranking.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import cache

from cq.model import Focus, Pattern
from cq.model.tuning import RewriteTuning
from cq.parse.syntax import is_test_path
from cq.rewrite.asks import one_line_callers_question
from cq.rewrite.extract import COMMON_NAMES, Mentions, is_special, split_dotted
from cq.rewrite.paths import frame_literals, module_hints, path_hints
from cq.rewrite.plan import RewritePlan, cap_patterns
from cq.rewrite.vocabulary import Vocabulary, name_words
from cq.rewrite.words import (
    ABBREVIATIONS,
    GENERIC_WORDS,
    STOP_WORDS,
    SYNONYMS,
    numbered,
    stem,
    subwords,
    words,
)

SOURCE = "offline"
_TEST_WORDS = frozenset({"test", "tests", "testing", "tested", "fixture", "fixtures", "pytest"})
_IMPL_WORDS = frozenset({"how", "where", "why", "implement", "implemented", "implementation"})


def offline_rewrite(
    query: str,
    mentions: Mentions,
    vocabulary: Vocabulary,
    subject: str | None = None,
    t: RewriteTuning | None = None,
) -> RewritePlan:
    """Patterns, focus and path hints for ``query`` (weights from ``t``); deterministic for
    identical input."""
    t = t or RewriteTuning()
    weights: dict[str, float] = {}
    if subject:
        _add(weights, subject, t.subject)
    frames = mentions.frame_functions
    for depth, name in enumerate(reversed(frames)):
        if vocabulary.defines(name) and name not in COMMON_NAMES:
            weight = t.frame_innermost if depth == 0 else t.frame_near if depth < 3 else t.frame_far
            _add(weights, name, weight)
    # "who calls Parser.parse_subcommand?" asks for the method's calls, not the class's uses
    callers = one_line_callers_question(query)
    # What the reporter names in their own words outweighs what the code they pasted calls.
    for names, own in ((mentions.prose_names, t.prose_name), (mentions.code_names, t.code_name)):
        for name in names:
            parts = _name_parts(name, t)
            for part, strength in parts[:1] if callers else parts:
                if vocabulary.defines(part):
                    _add(weights, part, strength * (own if _distinctive(part) else t.plain_part))
                elif _distinctive(part):  # keyword arguments, attributes, ...
                    _add(weights, part, strength * t.undefined_part)
    modules = module_hints(mentions.prose, vocabulary, t)
    # "who calls parse_subcommand?" names what it asks about: the words mapped onto other
    # names (parse_help_subcommand, Parser, parse, ...) only bury its calls
    named = callers and any(vocabulary.defines(n) for n in weights)
    mapped = (
        () if named else map_words(mentions.prose, vocabulary, t, exclude=weights, prefer=modules)
    )
    for name, score in mapped:
        # a guess: below anything the text names
        _add(weights, name, t.mapped_floor + t.mapped_span * score)
    patterns = [
        Pattern(text=n, kind="identifier", source=SOURCE, weight=round(w, 3))
        for n, w in weights.items()
    ]
    patterns += [
        Pattern(text=m, kind="literal", source=SOURCE, weight=t.message)
        for m in mentions.messages[: t.max_messages]
    ]
    patterns += frame_literals(mentions, vocabulary, SOURCE, t)
    return RewritePlan(
        patterns=cap_patterns(patterns, t),
        focus=guess_focus(query, t),
        path_hints=path_hints(mentions, vocabulary, tuple(weights), modules, t),
        rewriter=SOURCE,
    )


def map_words(
    prose: str,
    vocabulary: Vocabulary,
    t: RewriteTuning,
    exclude: dict[str, float] | None = None,
    prefer: dict[str, float] | None = None,
) -> list[tuple[str, float]]:
    """Defined names covering the prose's content words, best first, scores in (0, 1].

    A name earns each query word it contains (a synonym's match counts half) times the word's
    rarity among the defined names; it must cover two query words, or all of its own parts
    (``tarfile`` covers ``TarFile`` whole). Generic words (``file``, ``error``) never select a
    name alone but, in a short question, count at a third as a name's second word: ``rotate
    ... files`` prefers ``RotatingFileHandler`` to a bare ``rotate``. Names defined in the
    files of ``prefer`` (modules the prose names: "where does argparse format help") count up
    to double, and in a short question names defined elsewhere half.
    """
    wanted = _content_stems(prose)
    if not wanted or not vocabulary.names:
        return []
    weak: dict[str, float] = {}
    short = len(prose) < t.short_question
    if short:  # in a long report generic words are many, and mostly noise
        weak = {s: w for s, w in _content_stems(prose, generic=True).items() if s not in wanted}
    lookup = _Names(vocabulary)
    n_names = len(vocabulary.names)
    idf = {s: math.log(1 + n_names / (1 + lookup.count(s))) for s in (*wanted, *weak)}
    credit: dict[str, dict[str, float]] = {}  # name -> query stem -> best credit
    whole: set[str] = set()  # names a single query word spells out entirely
    for s in wanted:
        for alt, share in ((s, 1.0), *((x, t.synonym) for x in _synonym_stems().get(s, ()))):
            for name in lookup.containing(alt):
                got = credit.setdefault(name, {})
                got[s] = max(got.get(s, 0.0), share)
        for name in lookup.spelled(s):
            credit.setdefault(name, {})[s] = 1.0
            whole.add(name)
    for s in weak:
        for name in lookup.containing(s):
            if name in credit:
                credit[name].setdefault(s, t.generic_second_word)
    ranked: list[tuple[str, float]] = []
    for name, got in credit.items():
        if (exclude and name in exclude) or name in COMMON_NAMES or len(name) < 3:
            continue
        parts = {stem(p) for p in subwords(name)}
        if name not in whole and len(got) < min(2, len(parts)):
            continue  # a long name sharing one word with the query says little
        score = sum(idf[s] * (wanted.get(s) or weak[s]) * share for s, share in got.items())
        files = vocabulary.names.get(name, ())
        if _only_tests(files):
            score *= t.tests_only  # the question is about the code, not about its tests
        if prefer:  # named modules' own names up; in a short question, the others' down
            named = max((prefer.get(rel, 0.0) for rel in files), default=0.0)
            score *= 1.0 + named if named else t.unnamed_module if short else 1.0
        ranked.append((name, score / math.sqrt(len(parts))))
    ranked.sort(key=lambda item: (-item[1], item[0]))
    top = ranked[: t.max_mapped]
    best = top[0][1] if top else 1.0
    return [(name, round(score / best, 4)) for name, score in top]


@cache
def _synonym_stems() -> dict[str, frozenset[str]]:
    table: dict[str, set[str]] = {}
    for word, alternatives in (*SYNONYMS.items(), *ABBREVIATIONS.items()):
        table.setdefault(stem(word), set()).update(stem(a) for a in alternatives)
    return {k: frozenset(v - {k}) for k, v in table.items()}


def guess_focus(query: str, t: RewriteTuning) -> Focus:
    """Tests when the text asks about tests, implementation for questions and reports. A
    report's body says "test" in passing (the test set, "I tested it"): only its title (the
    first line) makes it about tests (measured with ``python -m bench.localization``;
    figures: bench/results/2026-11-29-figures-from-cq.md)."""
    lines = [ln for ln in query.splitlines() if ln.strip()]
    head = lines[0] if len(lines) > 1 else query
    lowered = {w.lower() for w in words(head[:400])}
    if lowered & _TEST_WORDS and len(query) < 400:
        return "tests"
    if lowered & _IMPL_WORDS or len(query) >= t.short_question:
        return "implementation"
    return "all"


def _name_parts(name: str, t: RewriteTuning) -> list[tuple[str, float]]:
    """``pkg.mod.Class.meth`` -> the method (1.0) and the class (0.8); plain names as they are."""
    parts = [p for p in split_dotted(name) if p.isidentifier()]
    if not parts:
        return []
    out = [(parts[-1], 1.0)]
    if len(parts) > 1 and parts[-2][:1].isupper():
        out.append((parts[-2], t.class_part))
    # ``Model.__init__``: the class says what it is about, not its special method
    return [(p, s) for p, s in out if len(p) >= 3 and p not in COMMON_NAMES and not is_special(p)]


def _distinctive(name: str) -> bool:
    """snake_case, CamelCase, digits: a name no sentence uses by accident."""
    return "_" in name.strip("_") or any(c.isdigit() for c in name) or name[1:] != name[1:].lower()


def _only_tests(files: tuple[str, ...]) -> bool:
    return bool(files) and all(is_test_path(rel) for rel in files)


def _add(weights: dict[str, float], name: str, weight: float) -> None:
    if name.isidentifier():
        weights[name] = max(weights.get(name, 0.0), weight)


def _content_stems(prose: str, *, generic: bool = False) -> Counter[str]:
    """Stems of the prose's content words (``generic``: of its generic words instead)."""
    counts: Counter[str] = Counter()
    if not generic:  # "RFC 3339": code writes the number into the name (parse_rfc3339)
        for word, number in numbered(prose):
            if word.lower() not in STOP_WORDS and len(number) >= 2:
                counts[stem(number)] += 1
    for word in words(prose):
        lower = word.lower()
        if lower in STOP_WORDS or len(lower) < 3 or lower.isdigit():
            continue
        if (lower in GENERIC_WORDS) != generic:
            continue
        for part in subwords(word):
            if len(part) >= 3 and part not in STOP_WORDS:
                counts[stem(part)] += 1
    return Counter({s: 1 + math.log(c) for s, c in counts.items()})


class _Names:
    """Name lookups by query stem over the vocabulary's names (``name_words``)."""

    def __init__(self, vocabulary: Vocabulary) -> None:
        self.words = name_words(vocabulary)
        self.names = self.words.names

    def count(self, stem_: str) -> int:
        return len(self.words.containing(stem_))

    def containing(self, stem_: str) -> list[str]:
        return [self.names[i] for i in self.words.containing(stem_)]

    def spelled(self, stem_: str) -> list[str]:
        return [self.names[i] for i in self.words.spelled(stem_)]
