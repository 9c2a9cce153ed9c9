"""Ask the index for the files and units a question is about.

In: an opened index, the ``Question`` (its text read once, at the search's front) and the
rewriter's terms. Out: ``IndexHits``, the
best file documents and unit documents with their BM25 scores, best first. The text becomes
a bag of words (identifiers whole and split, see ``words.py``), a word said n times weighing
1 + ln n; the rewriter's terms join as words of weight 1. No stop-word list beyond English
function words (``cq.rewrite.FUNCTION_WORDS``: "how", "are", "the"; its note has the figures):
BM25's IDF already discounts words every file has, but not "are" in the few test names
written as sentences.

This query was chosen over a stop-word list of English and bug-report words and over the
rewriter's terms boosted. An issue text's title (its first line, when more follow) is its
summary: its words weigh ``index.title_weight`` times as much. A one-line question (an
issue title) asks with its own words only: the rewriter maps each word onto the
vocabulary's names (``checkpoint`` -> ``ModelCheckpoint``, ``checkpoint_callback``, ...)
and their subwords outnumber a title's few words; issue texts keep the terms. A Python
text's title names files by their name alone too (``mentions.files_named_by_words``:
"Running Cycle GAN" names ``CycleGAN.py``), after the paths the text names. Each choice
was measured with ``python -m bench.studies.index_fusion`` (``--requery`` on the saved
signals) on lite-dev, python_tuning and rust_tuning: the figures are in
bench/results/2026-11-29-figures-from-cq.md (``cq/index/query.py``).

Every number here (words kept, field boosts, documents asked for) is ``Tuning.index``'s
(``cq/model/index_tuning.py``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

import msgspec

from cq.index.keys import path_of
from cq.index.mentions import (
    Definition,
    Mention,
    code_names,
    defining_files,
    files_named_by_words,
    merged,
    named_files,
)
from cq.index.words import prose_words, split_words
from cq.model import Question
from cq.model.index_tuning import IndexTuning
from cq.model.language import is_python_module, is_rust
from cq.rank import path_role
from cq.rewrite import (
    ABBREVIATIONS,
    IRREGULAR_FORMS,
    THESAURUS,
    base_forms,
    derived_forms,
    numbered,
)


class IndexHit(msgspec.Struct, frozen=True, kw_only=True):
    """One retrieved document: a file (``kind`` "file", no qualname) or a unit."""

    path: str
    kind: str
    qualname: str = ""
    line: int = 1
    score: float = 0.0


class IndexHits(msgspec.Struct, frozen=True, kw_only=True):
    """BM25's files and units, and the files the text names or whose definitions it names
    (``mentions.py``: Python files only)."""

    files: tuple[IndexHit, ...] = ()
    units: tuple[IndexHit, ...] = ()
    named: tuple[Mention, ...] = ()
    defined: tuple[Mention, ...] = ()
    one_line: bool = False  # the text is one line: a question, or an issue's title alone


def ask(
    index: Any,
    paths: Iterable[str],
    question: Question,
    terms: tuple[str, ...],
    tuning: IndexTuning | None = None,
    words: dict[str, float] | None = None,
) -> IndexHits:
    """Everything the index says about a question: BM25 hits for its words (``asked_words``,
    unless the caller computed them), the files it names (Python files; a
    Rust tree's .rs files too), and for an issue text (more than one line) the Python files
    defining the names it writes as code. A one-line question may ask for a name's uses ("who
    calls build_graph"): its definition's file must not lead then (on titles the defining
    files left file Acc@5 unchanged: ``bench.localization --text title``, figures in
    ``bench/results/``). The question's text is read once, by
    ``cq.rewrite.question``: its ``body`` (environment sections left out), ``title``,
    ``mentions``."""
    tuning = tuning or IndexTuning()
    paths = list(paths)
    py = [p for p in paths if is_python_module(p)]
    rs = [p for p in paths if is_rust(p)]
    rust = len(rs) * 2 > len(paths)
    one_line = question.lines < 2
    if words is None:
        words = asked_words(question, terms, tuning)
    hits = msgspec.structs.replace(search_index(index, words, tuning), one_line=one_line)
    if not py and not rust:
        return hits
    mentions = question.mentions
    # A Rust tree's own .rs files first (its few .py files, read as before, after them).
    named = tuple(named_files(mentions, rs, tuning, "rust")) if rust else ()
    if not py:
        return msgspec.structs.replace(hits, named=named)
    named += tuple(merged(named_files(mentions, py, tuning), _named_by_title(question, py, tuning)))
    if one_line:
        return msgspec.structs.replace(hits, named=named)
    names = code_names(mentions)
    own = {
        name: [d for d in units if is_python_module(d.path) and path_role(d.path) != "test"]
        for name, units in definitions(index, names, tuning).items()
    }
    defined = tuple(defining_files(names, own, tuning.mention_max_files))
    return msgspec.structs.replace(hits, named=named, defined=defined)


def _named_by_title(question: Question, py: list[str], tuning: IndexTuning) -> list[Mention]:
    """Files the title (first line) names by their name alone (``mentions.py``), tests left
    out."""
    return files_named_by_words(question.title, py, lambda p: path_role(p) != "test", tuning)


def asked_words(
    question: Question, terms: tuple[str, ...], tuning: IndexTuning
) -> dict[str, float]:
    """The words the index is asked for the question: its own (``body``: an issue form's
    environment sections cut) and the rewriter's ``terms``; a one-line question's own words
    only, without the auxiliary "is" after its question word, with their base forms and
    abbreviations (``with_base_forms``)."""
    text = question.body
    if question.lines >= 2:
        return query_words(text, terms, tuning.max_words, tuning.title_weight)
    # the terms drown a short question's words (the module docstring)
    words = query_words(_without_auxiliary(text), (), tuning.max_words, tuning.title_weight)
    # "rendered": the code says render; "combined": it says merge
    return with_base_forms(words, tuning.base_form_weight, tuning.synonym_weight)


def is_one_line(text: str) -> bool:
    return len([ln for ln in text.splitlines() if ln.strip()]) < 2


def query_words(
    text: str, terms: tuple[str, ...], max_words: int, title: float = 1.0
) -> dict[str, float]:
    """Word -> weight: how often the text says it (log-damped; its ``max_words`` most
    frequent words), times ``title`` for the words of its first line when more lines
    follow; the rewriter's terms too. English function words are left out
    (``cq.rewrite.FUNCTION_WORDS``); a word and a number written apart are asked joined as well,
    as code spells them ("RFC 3339" -> rfc3339, which the body's tokenizer keeps whole), and
    an irregular verb's past form its base too ("built" -> build)."""
    counts = Counter(w for w in prose_words(text) if len(w) > 1)
    counts.update(f"{word}{number}".lower() for word, number in numbered(text))
    most = counts.most_common(max_words)
    weights = {w: round(1.0 + math.log(n), 3) for w, n in most}
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if title != 1.0 and len(lines) > 1:
        for w in set(split_words(lines[0]).split()):
            if w in weights:
                weights[w] = round(weights[w] * title, 3)
    for w, weight in list(weights.items()):
        if base := IRREGULAR_FORMS.get(w):  # "written": code says write_*
            weights.setdefault(base, weight)
    for term in terms:
        for w in split_words(term).split():
            if len(w) > 1:
                weights.setdefault(w, 1.0)
    return weights


# "how is a pipeline evaluated?": the "is" after a question word is the verb's auxiliary, but
# asked of the index it matched every short ``is_empty``, ``is_nothing`` by name (nushell's
# answer was ``PipelineData::is_nothing``). Elsewhere "is" stays: code names start with it,
# and leaving it out of every question cost rust_tuning texts and titles an issue of Acc@5.
_AUXILIARY = re.compile(r"\b(how|where|what|why|when|which|who)\s+is\b", re.IGNORECASE)


def _without_auxiliary(text: str) -> str:
    """A question's "is" after its question word left out ("how is X parsed" -> "how X
    parsed")."""
    return _AUXILIARY.sub(r"\1", text)


def with_base_forms(
    words: dict[str, float],
    share: float,
    synonyms: float = 0.0,  # none unless asked (a search asks IndexTuning.synonym_weight)
) -> dict[str, float]:
    """``words``, the base forms of its inflected ones (``cq.rewrite.base_forms``) and the
    abbreviations code writes for them (``cq.rewrite.ABBREVIATIONS``: evaluated -> eval) at
    ``share`` of their weight, and so its other spellings (``cq.rewrite.derived_forms``:
    improving -> improvement, the unstemmed body's stemming); a word the question says itself
    keeps its own weight (the
    abbreviations measured with ``python -m bench.studies.index_fusion --requery`` on the
    titles; figures: bench/results/2026-11-29-figures-from-cq.md), and the words code uses
    for them (``cq.rewrite.THESAURUS``: combined -> merge) at ``synonyms`` of their weight
    (0: none)."""
    out = dict(words)
    for w, weight in words.items():
        for base in (w, *base_forms(w)):
            if base != w:
                out.setdefault(base, round(weight * share, 3))
            for short in ABBREVIATIONS.get(base, ()):
                out.setdefault(short, round(weight * share, 3))
    for w, weight in words.items():
        for other in derived_forms(w):
            out.setdefault(other, round(weight * share, 3))
    if synonyms > 0:
        for w, weight in words.items():
            for base in (w, *base_forms(w)):
                for other in THESAURUS.get(base, ()):
                    out.setdefault(other, round(weight * synonyms, 3))
    return out


def search_index(index: Any, words: dict[str, float], tuning: IndexTuning) -> IndexHits:
    """The best ``files_asked`` file documents and unit documents for ``words``, down to the
    ``units_asked``-th unit outside the tests (``_units``)."""
    if not words:
        return IndexHits()
    searcher = index.searcher()
    file_boosts, unit_boosts = tuning.file_boosts.table(), tuning.unit_boosts.table()
    return IndexHits(
        files=_search(index, searcher, words, file_boosts, True, tuning.files_asked),
        units=_units(index, searcher, words, unit_boosts, tuning),
    )


def _units(
    index: Any, searcher: Any, words: dict[str, float], boosts: dict[str, float], t: IndexTuning
) -> tuple[IndexHit, ...]:
    """The best unit documents down to the ``units_asked``-th outside the tests, and every
    one tied with it (at most ``units_read_most`` read). Tests are written as sentences
    (``test_list_buckets_with_max_buckets``) and hold a question's words more often than the
    code they test, and pushed it out of the units the Relevant Functions, ranking tests
    after the code (``fuse.fused_units``), then see (measured on the everyday set:
    bench/results/2026-11-29-answer5/). One search; the documents are read in order until
    enough are found."""
    query = _query(index, words, boosts, False)
    best = _best_addresses(searcher, query, t.units_read_most)
    out: list[IndexHit] = []
    code, last = 0, 0.0
    for score, address in best:
        if code >= t.units_asked and score < last:
            break
        hit = _hit(searcher.doc(address), score)
        out.append(hit)
        if path_role(hit.path) != "test":
            code += 1
            last = score
    return _sorted(out)


def _best_addresses(searcher: Any, query: Any, limit: int) -> list[tuple[float, Any]]:
    """The ``limit`` best documents' addresses and every one tied with the last of them
    (``_best``: which of equal documents tantivy returns depends on how the index was
    written; a tree of many alike functions ties hundreds)."""
    asked = limit + 1
    while True:
        hits = searcher.search(query, asked, count=False).hits
        if len(hits) < asked or hits[-1][0] < hits[limit - 1][0]:
            return [(score, address) for score, address in hits]
        asked *= 2


def _search(
    index: Any,
    searcher: Any,
    words: dict[str, float],
    boosts: dict[str, float],
    files: bool,
    limit: int,
) -> tuple[IndexHit, ...]:
    query = _query(index, words, boosts, files)
    return _sorted([_hit(doc, score) for score, doc in _best(searcher, query, limit)])[:limit]


def _query(index: Any, words: dict[str, float], boosts: dict[str, float], files: bool) -> Any:
    """``words`` over the boosted fields, of file documents (``files``) or of units."""
    import tantivy

    text = " ".join(f"{w}^{weight:g}" if weight != 1.0 else w for w, weight in words.items())
    parsed, _errors = index.parse_query_lenient(text, list(boosts), field_boosts=boosts)
    kind = tantivy.Query.term_query(index.schema, "kind", "file")
    occur = tantivy.Occur.Must if files else tantivy.Occur.MustNot
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, parsed), (occur, kind)])


def _hit(doc: Any, score: float) -> IndexHit:
    return IndexHit(
        path=path_of(doc.get_first("path")),
        kind=doc.get_first("kind"),
        qualname=doc.get_first("qualname") or "",
        line=doc.get_first("line") or 1,
        score=score,
    )


def _sorted(hits: list[IndexHit]) -> tuple[IndexHit, ...]:
    """Best first, ties by path (tantivy breaks them by document address, ``_best``), the
    scores rounded."""
    hits.sort(key=lambda h: (-h.score, h.path, h.line, h.qualname))
    return tuple(msgspec.structs.replace(h, score=round(h.score, 4)) for h in hits)


def _best(searcher: Any, query: Any, limit: int) -> list[tuple[float, Any]]:
    """The ``limit`` best documents and every document tied with the last of them. Tantivy
    breaks equal scores by document address, and addresses depend on how the index was
    written (its writer's threads, the updates since the first build), never on the tree:
    asking past the cut until the tie ends lets the caller order ties by path instead."""
    if limit <= 0:
        return []
    return [
        (score, searcher.doc(address)) for score, address in _best_addresses(searcher, query, limit)
    ]


def definitions(index: Any, names: list[str], tuning: IndexTuning) -> dict[str, list[Definition]]:
    """Name -> the units of that name (their qualname's last part), in path order: the first
    ``max_names`` names, at most ``max_definitions`` units."""
    import tantivy

    names = names[: tuning.max_names]
    if not names:
        return {}
    pattern = r"(.*[.:])?(" + "|".join(names) + ")"
    query = tantivy.Query.regex_query(index.schema, "qualname", pattern)
    searcher = index.searcher()
    found: list[Definition] = []
    # Every unit of those names scores alike, and tantivy picks among equals by document
    # address (how the index was written, not the tree): when more match than are read, all
    # are listed and the first in path order kept.
    result = searcher.search(query, tuning.max_definitions, count=True)
    hits = result.hits
    if result.count > len(hits):
        hits = searcher.search(query, result.count, count=False).hits
    for _score, address in hits:
        doc = searcher.doc(address)
        found.append(
            Definition(
                path=path_of(doc.get_first("path")),
                qualname=doc.get_first("qualname"),
                line=doc.get_first("line") or 1,
                kind=doc.get_first("kind"),
            )
        )
    out: dict[str, list[Definition]] = {}
    found.sort(key=lambda d: (d.path, d.line, d.qualname))
    for d in found[: tuning.max_definitions]:
        out.setdefault(d.qualname.replace("::", ".").rsplit(".", 1)[-1], []).append(d)
    return out
