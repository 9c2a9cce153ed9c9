"""Did you mean: the tree's defined names nearest a name that matched nothing.

An identifier or dotted query that no file holds gets no Answer, only the names the tree
defines nearest it. They come from ``cq.rewrite``'s vocabulary (every ``def``, ``class``,
Rust item and module constant, one rg run cached as the rewriter caches it: no index needed,
and ``--no-cache`` runs the same rg). Nearness is general, not tuned to one tree:

- edits between the names read snake/camel-blind (case and underscores cost nothing:
  ``getLoger`` is one edit from ``getLogger`` and from ``get_logger``), a transposition
  one edit (optimal string alignment: ``get_bukcet`` -> ``get_bucket``);
- or their subwords (stemmed): the same words in another order cost 1 (``bucket_get`` ->
  ``get_bucket``), one word more or fewer 2 (``bucket_policy`` -> ``get_bucket_policy``);

accepted within ``len // suggest_chars_per_edit`` edits, at most ``suggest_max_edits``
(``ReportTuning``). Ties go to the name nearer as typed (case and underscores counted), then
by name; the nearest distance found is listed (every name at it, up to ``suggestions``), each
with its first definition site (a file outside tests first, then path order).

rapidfuzz (C++, MIT, wheels for every platform) computes the distances: an order of
magnitude faster than a Python loop over a large tree's vocabulary (the stdlib with its
site-packages; figures: bench/results/2026-11-29-figures-from-cq.md).
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from cq.confine import in_part
from cq.model import Scope, Suggestion
from cq.model.language import language_of
from cq.model.tuning import ReportTuning
from cq.parse import Corpus
from cq.rank.roles import path_role
from cq.rewrite import defined_names, definition_site, name_words, stem, subwords

if TYPE_CHECKING:
    from cq.rewrite import NameWords

_SEPARATOR = re.compile(r"\.|::")


def suggest_names(
    query: str, scope: Scope, corpus: Corpus, t: ReportTuning
) -> tuple[Suggestion, ...]:
    """The nearest defined names to the query's (last) name, in the request's scope. A file
    name (``utils.py``) is no name defined in code, nor is its last dotted part (``py``):
    ``files_named`` answers it first."""
    name = _SEPARATOR.split(query.strip())[-1]
    vocabulary = defined_names(scope, corpus.listing)
    words = name_words(vocabulary)
    ranked = nearest_names(name, words.names, words, t)
    found: list[Suggestion] = []
    for distance, candidate in ranked:
        if found and distance > found[0].distance:
            break
        files = [f for f in vocabulary.names[candidate] if _in_scope(f, scope)]
        site = _first_site(candidate, files, corpus, scope)
        if site is not None:
            found.append(Suggestion(name=candidate, distance=distance, **site))
            if len(found) == t.suggestions:
                break
    return tuple(found)


def nearest_names(
    name: str,
    names: Sequence[str],
    word_index: NameWords,
    t: ReportTuning,
) -> list[tuple[int, str]]:
    """Every name within reach of ``name`` as (distance, name), nearest first.
    ``word_index``: the names holding a stemmed subword, by position in ``names``."""
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    folded = _fold(name)
    if not folded:
        return []
    reach = _reach(len(folded), t)
    distances: dict[int, int] = {}
    # Case and underscores folded away for all names at once (one join, not a loop).
    every = "\n".join(names).lower().replace("_", "").split("\n")
    for _, distance, position in process.extract(
        folded, every, scorer=OSA.distance, score_cutoff=reach, limit=None
    ):
        distances[position] = int(distance)
    for position, distance in _by_words(name, names, word_index, reach).items():
        distances[position] = min(distance, distances.get(position, distance))
    ranked = sorted(
        (distance, OSA.distance(name, names[position]), names[position])
        for position, distance in distances.items()
        if names[position] != name
    )
    return [(distance, candidate) for distance, _, candidate in ranked]


def _by_words(name: str, names: Sequence[str], word_index: NameWords, reach: int) -> dict[int, int]:
    """Names with the query's subwords reordered (distance 1) or one word more or fewer (2).
    A name lacking one of two words is that other word alone: left to the edit distance."""
    order = [stem(w) for w in subwords(name) if len(w) >= 2]
    words = Counter(order)
    if len(words) < 2 or reach < 1:  # one word: the edit distance says it all
        return {}
    shared: Counter[int] = Counter()
    for word in words:
        shared.update(word_index.get(word, ()))
    least = len(words) if len(words) == 2 else len(words) - 1
    near: dict[int, int] = {}
    for position, count in shared.items():
        if count < least:
            continue
        their_words = [stem(w) for w in subwords(names[position]) if len(w) >= 2]
        theirs = Counter(their_words)
        differ = sum(((words - theirs) + (theirs - words)).values())
        if their_words == order:  # the same words in the same order: the edit distance's
            continue
        if differ <= 1 and 1 + differ <= reach:
            near[position] = 1 + differ
    return near


def _reach(length: int, t: ReportTuning) -> int:
    """How many edits a name of ``length`` characters (folded) may be from the query."""
    if length < 3:
        return 0
    return max(1, min(t.suggest_max_edits, length // t.suggest_chars_per_edit))


def _fold(name: str) -> str:
    return name.lower().replace("_", "")


def _in_scope(path: str, scope: Scope) -> bool:
    if language_of(path, scope.lang) is None:
        return False
    return in_part(path, scope.in_dir)


def _first_site(
    name: str, files: list[str], corpus: Corpus, scope: Scope
) -> dict[str, object] | None:
    """Where the first of ``files`` (outside tests first, then in path order) defines it."""
    for path in sorted(files, key=lambda f: (path_role(f) != "src", f)):
        language = language_of(path, scope.lang)
        source = corpus.source(path, language) if language is not None else None
        text = source.text if source is not None else None
        site = definition_site(text, name) if text is not None else None
        corpus.release(path)
        if site is not None:
            line, col, kind = site
            return {"file": posixpath.normpath(path), "line": line, "col": col, "kind": kind}
    return None


# a file name, with a line (``utils.py:12``, ``utils.py:12:5``) as tracebacks and linters cite it
_FILE_NAME = re.compile(r"(?P<path>[\w./-]+\.(?:py|pyi|rs))(?::(?P<line>\d+)(?::\d+)?)?")


def files_named(
    query: str, scope: Scope, corpus: Corpus, most: int
) -> tuple[Suggestion, ...] | None:
    """The searched files whose path is ``query`` or ends with it (kind ``file``, at the
    line the query names when the file has it, else line 1); None when the query is no file
    name, or no file of the tree has it."""
    cited = _FILE_NAME.fullmatch(query.strip().replace("\\", "/").removeprefix("./"))
    if cited is None:
        return None
    wanted, line = cited["path"], int(cited["line"] or 1)
    try:
        listed = corpus.listing.files()
    except OSError:
        return None
    paths = [posixpath.normpath(f) for f in listed]
    named = [p for p in paths if (p == wanted or p.endswith("/" + wanted)) and _in_scope(p, scope)]
    kept = sorted(named, key=lambda p: (p != wanted, p))[:most]  # as written first, then by path
    return (
        tuple(
            Suggestion(
                name=path,
                kind="file",
                file=path,
                line=_line_in(corpus, path, line),
                col=0,
                distance=0,
            )
            for path in kept
        )
        or None
    )


def _line_in(corpus: Corpus, path: str, line: int) -> int:
    """``line`` when the file has that many lines, else 1 (its top)."""
    try:
        with (corpus.listing.root / path).open("rb") as f:
            has = sum(1 for _ in f)
    except OSError:
        has = 0
    return line if line <= has else 1
