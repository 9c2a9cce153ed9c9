"""Relevant Functions' first places by how much of the question each one's own text says.

The fused unit order (``fuse.fused_units``) is a rank fusion of the index's units, rg's
scopes and their files' places: its first ten often score within a few percent of each other,
and ranks alone decide which is first. A question's answer was mostly among them but not
first, and this reorder puts it first more often (the blind questions of
``bench/data/questions-blind*.jsonl``; ``bench/results/index-decisions.md``). Reading each of
the first candidates' own text (names, signature, docstring, body) and counting which of the
asked words it holds, each word weighted by how few of the candidates hold it, tells the
function that does what the question says from its neighbours that share the file's
vocabulary (``MinSaver._trigger`` from ``ModelSaver.__init__``;
``_correct_ambiguous_vr_element`` from its wrapper).

Words are compared as ``cq.rewrite.stem`` stems of ``split_words`` subwords, so "rendered"
meets ``render`` and "checkpoints" ``checkpoint``. Numbers: ``IndexTuning``'s
``coverage_*`` fields (their notes have the figures).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import msgspec

from cq.index.function_signals import is_setter, makes_self
from cq.index.fuse import FileVote, UnitVote
from cq.index.literals import without_strings
from cq.index.query import IndexHit
from cq.index.words import split_words
from cq.model.language import is_rust
from cq.rank import path_role
from cq.rewrite import stem

if TYPE_CHECKING:
    from cq.index.units import Unit

# the kinds of a Python unit (``cq.index.units.Unit.kind``); every other kind is Rust's
_PYTHON_KINDS = frozenset(("class", "function", "module"))


def unit_words(text: str) -> frozenset[str]:
    """The stems of every identifier, subword and word of a unit's text."""
    return frozenset(stem(w) for w in split_words(text).split())


def words_of(u: Unit, owner_doc: str = "", *, strings: bool = True) -> frozenset[str]:
    """``unit_words`` of what a unit says: its names, signature, docstring and body (and
    ``owner_doc``, as ``head_of``); without ``strings``, its body's string literals are left
    out (``literals.without_strings``): what the code does, not what it tells its user."""
    body = u.text if strings else without_strings(u.text, rust=u.kind not in _PYTHON_KINDS)
    return unit_words(f"{u.names} {u.signature} {u.doc} {owner_doc} {body}")


def head_of(u: Unit, owner_doc: str = "") -> frozenset[str]:
    """``unit_words`` of what a unit says it does: its names, signature and docstring (and
    ``owner_doc``, its class's docstring, where that describes the unit: ``_called``)."""
    return unit_words(f"{u.names} {u.signature} {u.doc} {owner_doc}")


def _called(units: Mapping[str, Unit], u: Unit) -> str:
    """The docstring of the Python class whose ``__call__`` ``u`` is, when ``u`` has none of
    its own: calling an instance is what such a class is for (a handler, a metric, a
    transform), so its docstring says what ``__call__`` does ("Stops the training when the
    score has not improved for ``patience`` evaluations"), and ``__call__`` rarely says it
    again.
    Other methods keep their own words: a class's docstring is not what each of them does."""
    owner, _, name = u.qualname.rpartition(".")
    if name != "__call__" or not owner or u.doc.strip() or u.kind != "function":
        return ""
    cls = units.get(owner)
    return cls.doc if cls is not None and cls.kind == "class" else ""


def functions_of(units: Mapping[str, Unit], owner: str = "") -> list[Unit]:
    """The functions among a file's ``units`` (by qualified name, in file order), or only
    those of the Python class ``owner``."""
    prefix = f"{owner}." if owner else ""
    return [u for q, u in units.items() if u.kind in ("function", "fn") and q.startswith(prefix)]


class UnitReader:
    """The words the rereads need (``order.fused_order``), over ``units``: a file's scanned
    units by qualified name (``cq.index.units``), from a search's corpus or the bench's trees.
    Each unit's words are made once."""

    def __init__(self, units: Callable[[str], Mapping[str, Unit]]) -> None:
        self.units = units
        # a unit's words, with its string literals or without them (``code``)
        self.said: dict[tuple[str, str, bool], frozenset[str]] = {}

    def words(self, vote: UnitVote) -> frozenset[str] | None:
        """A Relevant Function's words (``by_coverage``); None: not found in its file."""
        u = self.units(vote.file).get(vote.qualname)
        return self._words(vote.file, u) if u is not None else None

    def code(self, vote: UnitVote) -> frozenset[str] | None:
        """A Relevant Function's words without its string literals (``words_of``), for a
        how-question's shares (``apply``); None: not found in its file."""
        u = self.units(vote.file).get(vote.qualname)
        return self._words(vote.file, u, strings=False) if u is not None else None

    def head(self, vote: UnitVote) -> frozenset[str] | None:
        """A Relevant Function's names, signature and docstring words (``head_of``); None: not
        found in its file."""
        units = self.units(vote.file)
        u = units.get(vote.qualname)
        if u is None:
            return None
        return head_of(u, _called(units, u))

    def setter(self, vote: UnitVote) -> bool:
        """Whether a Relevant Function is a builder's setter or a named constructor
        (``function_signals.is_setter``, ``makes_self``)."""
        u = self.units(vote.file).get(vote.qualname)
        rust = is_rust(vote.file)
        return u is not None and (is_setter(u.signature, rust) or makes_self(u.signature, rust))

    def lines(self, vote: UnitVote) -> int:
        """A Relevant Function's length in lines (``function_signals.sizes``); 0: not found."""
        u = self.units(vote.file).get(vote.qualname)
        return len(u.text.splitlines()) if u is not None else 0

    def functions(self, path: str) -> list[frozenset[str]]:
        """The words of each function of the file (``files_by_coverage``)."""
        return [self._words(path, u) for u in functions_of(self.units(path))]

    def members(self, hit: IndexHit) -> list[tuple[IndexHit, frozenset[str]]]:
        """The methods of the class ``hit`` with their words, in file order (``with_members``)."""
        return [
            (
                IndexHit(path=hit.path, kind=u.kind, qualname=u.qualname, line=u.line),
                self._words(hit.path, u),
            )
            for u in functions_of(self.units(hit.path), hit.qualname)
        ]

    def _words(self, path: str, u: Unit, *, strings: bool = True) -> frozenset[str]:
        key = (path, u.qualname, strings)
        if key not in self.said:
            self.said[key] = words_of(u, _called(self.units(path), u), strings=strings)
        return self.said[key]


def _asked(words: Mapping[str, float]) -> dict[str, float]:
    """The asked words by stem, each at the largest weight of the words sharing it."""
    asked: dict[str, float] = {}
    for word, weight in words.items():
        key = stem(word)
        asked[key] = max(asked.get(key, 0.0), weight)  # 0.0: no weight yet
    return asked


def coverage(
    words: Mapping[str, float], held: Sequence[frozenset[str] | None], *, whole: bool = False
) -> list[float]:
    """Each candidate's share (0-1) of the asked words' weight that its text holds.

    A word weighs its asked weight times ``log((n + 1) / (df + 0.5))`` (hand-set) over the ``n``
    candidates, ``df`` of which hold it: a word every candidate says (the file's own subject)
    counts little, one only the answer says counts most. Words no candidate holds are left
    out of the total, unless ``whole`` (then they count at the largest weight, ``df`` 0): a
    share of the whole question, for a few words (a name) where one word no other candidate
    holds would be all of what the rest hold. A candidate whose text could not be read
    (``None``) covers nothing."""
    asked = _asked(words)
    n = len(held)
    df = {w: sum(1 for h in held if h is not None and w in h) for w in asked}
    # a smoothed inverse document frequency that stays above 0 when all n hold the word
    idf = {
        w: math.log((n + 1) / (df[w] + 0.5))  # hand-set: BM25's +0.5
        for w in asked
        if df[w] or whole
    }
    weight = {w: asked[w] * x for w, x in idf.items()}
    total = sum(weight.values())
    if total <= 0:
        return [0.0] * n  # no asked word in any candidate: nothing to tell them apart by
    held_weight = [sum(v for w, v in weight.items() if w in h) if h else 0.0 for h in held]
    return [x / total for x in held_weight]  # shares of the total, 0 to 1


def by_coverage(
    units: list[tuple[UnitVote, list[UnitVote]]],
    words: Mapping[str, float],
    read: Callable[[UnitVote], frozenset[str] | None],
    top: int,
    weight: float,
    least: int = 0,
) -> list[tuple[UnitVote, list[UnitVote]]]:
    """``units`` (each with its namesakes) with the first ``top``, and any later one among
    the index's first ``top``, reordered by their fused score times ``1 + weight *
    coverage``; the rest keep their order after them. The index's own first units join
    because the fused order ranks a unit by its file's place too, and for a question rg's
    patterns may miss the file the index ranks high (allennlp's ``_argsort_by_padding`` for
    "how are instances of similar length grouped into the same batch to reduce padding?").
    Fewer than ``least`` distinct stems asked ("how are templates rendered?") leave the order
    as fused: two or three words tell the candidates apart by chance. ``read`` gives a
    unit's words (``unit_words``), None when its text cannot be found."""
    if top < 2 or weight <= 0 or len(_asked(words)) < least:
        return units
    later = [u for u in units[top:] if 0 < u[0].rank_index <= top]
    head = units[:top] + later
    shares = coverage(words, [read(vote) for vote, _ in head])
    # coverage only raises a score: 1 + ``weight`` (IndexTuning.coverage_weight) x share
    scores = [vote.fused * (1.0 + weight * x) for (vote, _), x in zip(head, shares, strict=True)]
    order = sorted(range(len(head)), key=lambda i: (-scores[i], i))
    joined = {id(u) for u in later}
    return [head[i] for i in order] + [u for u in units[top:] if id(u) not in joined]


def with_members(
    units: tuple[IndexHit, ...],
    words: Mapping[str, float],
    members: Callable[[IndexHit], Sequence[tuple[IndexHit, frozenset[str]]]],
    named: Callable[[str], bool] | None = None,
) -> tuple[IndexHit, ...]:
    """The index's units with each Python class replaced by the one of its methods whose
    text holds most of the asked words, at the class's place (``members`` gives a class's
    methods with their words, in file order; the first wins a tie). A class is not a
    Relevant Function (``fuse._container``), yet its docstring is often what the question
    paraphrases: torchbearer's ``EarlyStopping`` ("stop training when a monitored quantity
    has stopped improving") was the index's first unit for "when does training get halted
    because the monitored metric stopped improving?", and none of its methods was listed;
    now ``EarlyStopping.step``. A class none of whose methods holds a word stays, and is
    left out of the list as before. It helps Python's questions; Rust's types and
    impl blocks keep their place, where the same lowered the Rust set a little
    (``python -m bench.studies.index_fusion --signals``; ``bench/results/index-decisions.md``).
    A class the question names (``named``: ``function_signals.names_container``) stays
    itself: it is what was asked for."""
    out: list[IndexHit] = []
    for hit in units:
        kept = named is not None and named(hit.qualname)
        if hit.kind == "class" and not is_rust(hit.path) and not kept:
            found = members(hit)
            shares = coverage(words, [held for _, held in found])
            if shares and max(shares) > 0:
                best = max(range(len(found)), key=lambda i: (shares[i], -i))
                out.append(msgspec.structs.replace(found[best][0], score=hit.score))
                continue
        out.append(hit)
    return tuple(out)


def files_by_coverage(
    votes: list[FileVote],
    words: Mapping[str, float],
    functions: Callable[[str], Sequence[frozenset[str]]],
    top: int,
    weight: float,
    least: int = 0,
    *,
    tests_wanted: bool = False,
) -> list[FileVote]:
    """The fused file order with its first ``top`` files reordered by their fused score
    times ``1 + weight * best``, ``best`` the coverage of the file's function that holds most
    of the question (``coverage`` over every function of those files: ``functions`` gives a
    file's, as ``unit_words``). A file the text names (a traceback frame, a path, a panic
    location) or that defines a name the text writes as code keeps its place, as does a file
    without functions (a settings module whose constant is the answer) and, unless the
    question is about tests (``tests_wanted``), a test file: its test names spell out the
    behaviour the question asks about. The others fill the remaining places in their new
    order. Whole files' words did not tell files apart (a long file holds every word); their
    best function's did."""
    if top < 2 or weight <= 0 or len(_asked(words)) < least:
        return votes
    head = votes[:top]
    held = [functions(v.file) for v in head]
    flat = [h for file_held in held for h in file_held]
    shares = iter(coverage(words, flat))
    best = [max((next(shares) for _ in file_held), default=0.0) for file_held in held]
    fixed = [
        bool(v.rank_named or v.rank_defined or not h)
        or (not tests_wanted and path_role(v.file) == "test")
        for v, h in zip(head, held, strict=True)
    ]
    movable = sorted(
        (i for i in range(len(head)) if not fixed[i]),
        key=lambda i: (-head[i].fused * (1.0 + weight * best[i]), i),  # as by_coverage's
    )
    order = iter(movable)
    return [head[i] if fixed[i] else head[next(order)] for i in range(len(head))] + votes[top:]
