"""Relevant Functions' final order: which function a question's answer is, and why.

The fused unit order (``fuse.py``, reread by ``coverage.py``) ranks a function by a bag of
words: its text, its file's place, rg's finding order, and only its first ten are reread. What
a bag of words does not know, a question often says outright, and cq has read it: a
traceback's frames name the functions the error passed through (``Mentions.frame_functions``,
their files ``frame_paths``); a text writes the name of the function it is about, or of its
class, as code (``Mentions.code_names``, ``prose_names``); rg's classified hits inside a
function tell where the asked names are used; a fix goes into source, not into the tests
that exercise it; and what a how-question asks is done by code that runs, not by the
constructor that stores its settings. Each of the first ``IndexTuning.function_pool`` fused
units gets these signals (each 0-1) with its share of the question's words
(``coverage.coverage``, now over the whole pool) and its file's place in the fused file
order; its final score is its fused score relative to the best plus the weighted signals,
and the list is sorted by it. Its score as the Answer weighs the same signals but those that
order the list alone, and those that choose the Answer alone (``_AFTER``, ``_ANSWER_ONLY``);
``cq.assemble`` picks the Answer by it. The signals that moved it are kept as its evidence
(the report shows the Answer's; JSON keeps every value).

What was measured and left out (the share of a function's own name the question asks, the
rewriter's guessed names, calls between candidates, rg's first scopes joining the pool, a
title's Answer from its first file alone, a conditional logit over more signals) gained
nothing that held on both issue texts and titles. The weights are ``IndexTuning.signals``;
how each was measured, and the figures of what was left out: ``bench/results/function-signals.md``
(``python -m bench.studies.function_answer``, ``python -m bench.localization``).

Pure over plain data, so the study replays saved reports with exactly this code.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

import msgspec

from cq.index import function_signals as readers
from cq.index.coverage import coverage
from cq.index.function_signals import Asked, Candidate, Hit
from cq.index.fuse import UnitVote
from cq.index.scopes import rg_scope_key
from cq.model import Finding, Question
from cq.model.index_tuning import SignalWeights
from cq.model.language import is_rust
from cq.rank import last_name
from cq.rewrite import STOP_WORDS, name_stems, split_dotted, stem

# The default weights (``IndexTuning.signals``): what a search with no profile uses, and what
# the study of them (``bench/studies/function_answer.py``) starts from.
WEIGHTS = SignalWeights()
# Words saying what kind of name a question asks about ("the botocore stubber class"), not
# what the name says: left out of its content words, which a name must equal (``named``).
KIND_STEMS = frozenset(
    stem(w) for w in ("class", "struct", "enum", "trait", "type", "function", "method")
)


class Scored(msgspec.Struct, frozen=True, kw_only=True):
    """A candidate's place: its index in the fused list, the final score, its score as the
    Answer (``answer``: what the question says alone), each signal's value (0-1, before
    weighting) and the evidence a reader is shown."""

    at: int
    score: float
    signals: dict[str, float]
    evidence: tuple[str, ...]
    answer: float = 0.0
    # the candidates (their ``at``) that are copies of this one kept aside
    # (``_aside_copies``): its score as the Answer is at least theirs without ``aside``
    copies: tuple[int, ...] = ()


def asked(question: Question, words: Mapping[str, float]) -> Asked:
    """The question's signals: ``words`` as the index was asked, the names the ``question``
    writes (its ``mentions``, read once at the search's front)."""
    m = question.mentions
    stems: dict[str, float] = {}
    spelled: dict[str, str] = {}
    for word, weight in sorted(words.items(), key=lambda kv: (-kv[1], kv[0])):
        key = stem(word)
        stems[key] = max(stems.get(key, 0.0), weight)
        spelled.setdefault(key, word)
    written = {split_dotted(n)[-1] for n in (*m.code_names, *m.prose_names) if split_dotted(n)}
    return Asked(
        words=dict(words),
        stems=stems,
        spelled=spelled,
        written=frozenset(written),
        frames=m.frame_functions,
        frame_paths=m.frame_paths,
        messages=frozenset(x.lower() for x in m.messages),
        one_line=question.lines < 2,
        behaviour=question.behaviour,
        content=question.content - KIND_STEMS,
    )


def rerank(
    candidates: Sequence[Candidate],
    question: Asked,
    hits: Iterable[Hit],
    files: Sequence[str] = (),
    weights: SignalWeights = WEIGHTS,
    *,
    tests_wanted: bool = False,
) -> list[Scored]:
    """``candidates`` (fused order) scored with the question's signals, best first; ties keep
    the fused order. Test code counts against a candidate unless ``tests_wanted`` (the
    question is about tests): a fix goes into the code its tests exercise."""
    found = measured(candidates, question, hits, files, tests_wanted=tests_wanted)
    return ordered(found, weights)


def measured(
    candidates: Sequence[Candidate],
    question: Asked,
    hits: Iterable[Hit],
    files: Sequence[str] = (),
    held: Sequence[frozenset[str] | None] | None = None,
    sizes: Sequence[int] | None = None,
    heads: Sequence[frozenset[str] | None] | None = None,
    coded: Sequence[frozenset[str] | None] | None = None,
    *,
    tests_wanted: bool = False,
) -> list[Scored]:
    """Each candidate's signals and evidence, in fused order (no score yet); ``files``: the
    search's file order (its findings' files, best first); ``held``: each candidate's words
    (``coverage.unit_words``; None: its text was not found), for its share of the question;
    ``sizes``: each candidate's length in lines (0: not found); ``heads``: each one's names,
    signature and docstring words (``coverage.head_of``), for the ``head`` signal of a
    question led by a question word ("how are X done"), which asks what code does, and what
    code does its name and docstring say. An issue's title is no such question: "Missing
    up_modules in Network when scripted" names the class that holds the code, not the
    function that does it (``test_each_python_method_of_one_name_is_its_own_relevant_function``).
    ``coded``: each one's words without its string literals (``asks_code``), for the share
    the Answer is chosen by (``code``).

    A one-line question's shares count its content words only (``_content_words``)."""
    file_rank = {f: i for i, f in enumerate(files, 1)}
    words = _content_words(question)
    shares = coverage(words, held) if held else [0.0] * len(candidates)
    code = coverage(words, coded) if coded else None
    asks = heads and question.one_line and question.behaviour
    headed = coverage(words, heads) if asks else [0.0] * len(candidates)
    naming = _naming(candidates, words, question)
    variant = readers.variants(candidates, question)
    if not candidates:
        return []
    size = readers.sizes(sizes, len(candidates)) if question.one_line else [0.0] * len(candidates)
    inside = readers.inside(candidates, hits)
    top = max(c.fused for c in candidates) or 1.0
    most_inside = max(len(x) for x in inside) or 1
    asides = [readers.aside(c, question) for c in candidates]
    copied = _aside_copies(candidates, asides)
    out = []
    for i, c in enumerate(candidates):
        name = last_name(c.qualname)
        owner = 1.0 if readers.owner(c.qualname) in question.written else 0.0
        signals = {
            "fused": round(c.fused / top, 6),
            "frame": readers.frame(c, name, question),
            "written": 1.0 if name in question.written else 0.0,
            "named": readers.named(name, question),
            "owner": owner,
            "inside": round(math.log1p(len(inside[i])) / math.log1p(most_inside), 6),
            "covers": round(shares[i], 6),
            "head": round(headed[i], 6),
            "file": round(1.0 / file_rank[c.file], 6) if c.file in file_rank else 0.0,
            "test": 0.0 if tests_wanted or not readers.is_test(c) else 1.0,
            "size": size[i],
            "titled": owner if question.one_line else 0.0,
            "message": readers.message(inside[i], question),
            "constructor": readers.constructor(c, name, question),
            "aside": asides[i],
            "naming": round(naming[i], 6),
            "variant": variant[i],
        }
        if code is not None:
            signals["code"] = round(code[i], 6)
        words = readers.words_held(question, held[i] if held else None)
        evidence = readers.evidence(name, signals, inside[i], words)
        copies = tuple(j for j in copied.get(c.qualname, ()) if not signals["aside"])
        # score 0.0 is a placeholder: ``score_of`` sums the weighted signals once all are known
        out.append(Scored(at=i, score=0.0, signals=signals, evidence=evidence, copies=copies))
    return out


def asks_code(question: Asked) -> bool:
    """Whether a candidate's share of the question counts its code without its string
    literals (``coverage.UnitReader.code``) when the Answer is chosen (``code``, in place of
    ``covers``): for a one-line question that asks what code does (``Asked.behaviour``) and
    quotes no message. A message tells the user what
    went wrong; the code around it is what the function does. torchio's
    ``WeightedSampler.process_probability_map`` raises "might be near the image border", and
    those words made it the answer to "how does the weighted sampler avoid sampling patches
    near the image border", which ``clear_probability_borders`` (named for it, and called
    by it) does. A question that quotes a message (``Asked.messages``), or an issue's text,
    asks about what the program printed, and keeps the message's words. The list keeps its
    order by ``covers``: an assertion's message ("try splitting data at an earlier date")
    can say what its function is for, and that function is still worth reading."""
    return question.one_line and question.behaviour and not question.messages


def _naming(
    candidates: Sequence[Candidate], words: Mapping[str, float], question: Asked
) -> list[float]:
    """Each candidate's share of a one-line question's words that its own name says
    (``coverage`` over the candidates' last names, as ``head`` is over names, signature and
    docstring), for a line that asks (``Asked.content``): a function is named for what it
    does, so the one named by the question's verb and object (``Batch.get_padding_lengths``
    for "how are padding lengths computed for a batch of instances", ``Queue._fill`` for "how
    does the patch queue fill itself") does what its caller only hands on
    (``Batch.as_tensor_dict``, whose docstring and body say the question's words as often).
    A share of the whole question (``whole``): a name holding the one asked word no other
    name holds says little of a question of four. The Answer only, as ``constructor``: the
    list keeps its order."""
    if not question.content:
        return [0.0] * len(candidates)  # no one-line question: no naming signal
    return coverage(words, [name_stems(last_name(c.qualname)) for c in candidates], whole=True)


def _aside_copies(candidates: Sequence[Candidate], asides: Sequence[float]) -> dict[str, list[int]]:
    """The candidates kept aside from the project's own code (``asides``, each one's
    ``function_signals.aside``:
    a teaching copy, an example) by their qualified names. The project's function of the
    same name is what the copy shows: pyro's ``contrib/minipyro.py::apply_stack``, short
    and dense with the question's words, outscores ``poutine/runtime.py::apply_stack`` on
    "how does a sample statement pass through the stack of effect handlers"; the copy
    yields the Answer (``aside``), and what it scored counts for the original (``ordered``)."""
    out: dict[str, list[int]] = {}
    for i, (c, side) in enumerate(zip(candidates, asides, strict=True)):
        if side:
            out.setdefault(c.qualname, []).append(i)
    return out


def _content_words(question: Asked) -> dict[str, float]:
    """The words a candidate's shares of the question (``covers``, ``head``) are counted
    over: a one-line question's without the rewriter's stop words (``cq.rewrite.STOP_WORDS``:
    "to", "from", "for"), which the index is still asked (code names hold them, ``from_dict``)
    but which say nothing of what a question asks; "how is a misspelled option name suggested
    to the user" credited a cache check with "to" as one of four words of equal weight. An
    issue text's words stay as measured. Measured with ``head`` on the everyday set's concept
    and title pools: bench/results/2026-11-29-answer5/ (``replay_words.py``)."""
    if not question.one_line:
        return question.words
    return {w: x for w, x in question.words.items() if w not in STOP_WORDS} or question.words


def ordered(measured: Sequence[Scored], weights: SignalWeights = WEIGHTS) -> list[Scored]:
    """``measured`` candidates scored, best first (ties: the fused order): the relative fused
    score plus each signal times its weight. Each also gets its score as the Answer
    (``answer``), which weighs what the question says alone: the signals of ``_AFTER`` left
    out and those of ``_ANSWER_ONLY`` in. The list is sorted by ``score`` alone; which of them
    answers is ``cq.assemble``'s decision, read from ``answer``."""
    out = [
        msgspec.structs.replace(
            s,
            score=(score := round(score_of(s.signals, weights), 6)),
            answer=round(score + answer_shift(s.signals, weights), 6),
            evidence=tuple(
                e.split(":", 1)[1] for e in s.evidence if getattr(weights, e.split(":", 1)[0]) > 0
            ),
        )
        for s in measured
    ]
    by_at = {s.at: s for s in out}
    out = [_inherited(s, by_at, weights) if s.copies else s for s in out]
    out.sort(key=lambda s: (-s.score, s.at))
    return out


def _inherited(s: Scored, scored: Mapping[int, Scored], weights: SignalWeights) -> Scored:
    """``s`` with its score as the Answer at least its aside copies' (``Scored.copies``,
    found in ``scored`` by their ``at``) without what ``aside`` took from them."""
    copies = (scored[j] for j in s.copies if j in scored)
    best = max((c.answer - weights.aside * c.signals["aside"] for c in copies), default=s.answer)
    return msgspec.structs.replace(s, answer=round(max(s.answer, best), 6))


def best_answer(scored: Sequence[Scored]) -> Scored | None:
    """The candidate whose ``answer`` score is best (ties: the first listed)."""
    return min(scored, key=lambda s: -s.answer, default=None)


# Signals that order the list after the Answer, not the Answer: a one-line question's
# (an issue's title) function lengths (``function_signals.sizes``) and, as ``titled``, ``owner``
# again: a class a title names outright holds the method to change more often than one its words
# merely meet. Measured on titles by bench.localization (bench/results/function-signals.md).
_AFTER = ("size", "titled")
# Signals that choose the Answer, not the list's order: a how-question's constructors
# (``function_signals.constructor``) stay listed where their score puts them, since what they
# store is often what the answer reads. Measured on the blind questions' reports; issue titles,
# which are no questions, unchanged (bench/results/function-signals.md).
_ANSWER_ONLY = ("constructor", "aside", "naming", "variant")
# A how-question's share over the code alone (``asks_code``): the Answer's ``covers``.
_ANSWER_COVERS = "code"


def score_of(signals: Mapping[str, float], weights: SignalWeights) -> float:
    """A candidate's place in the list: the relative fused score and every weighted signal
    but those that choose the Answer alone."""
    return signals["fused"] + sum(
        getattr(weights, k) * v
        for k, v in signals.items()
        if k not in ("fused", _ANSWER_COVERS) and k not in _ANSWER_ONLY
    )


def answer_shift(signals: Mapping[str, float], weights: SignalWeights) -> float:
    """What a candidate's score as the Answer differs from its place in the list by: the
    signals that order the list after it out, those that choose the Answer alone in, and a
    how-question's share over the code in place of ``covers`` (``asks_code``)."""
    # 0.0 for a signal a candidate lacks: not measured for it, so it moves nothing
    covers = signals.get("covers", 0.0)
    code = weights.covers * (signals.get(_ANSWER_COVERS, covers) - covers)
    return (
        code
        - sum(getattr(weights, k) * signals.get(k, 0.0) for k in _AFTER)  # absent: moves nothing
        + sum(getattr(weights, k) * signals.get(k, 0.0) for k in _ANSWER_ONLY)  # likewise
    )


class Ranked(msgspec.Struct, frozen=True, kw_only=True):
    """A Relevant Function in its final place: the fused unit, its namesakes, its score."""

    vote: UnitVote
    namesakes: list[UnitVote]
    scored: Scored


def rerank_units(
    units: Sequence[tuple[UnitVote, list[UnitVote]]],
    findings: Sequence[Finding],
    files: Sequence[str],
    question: Asked,
    read: Callable[[UnitVote], frozenset[str] | None],
    size: Callable[[UnitVote], int] | None = None,
    weights: SignalWeights = WEIGHTS,
    *,
    tests_wanted: bool = False,
    head: Callable[[UnitVote], frozenset[str] | None] | None = None,
    setter: Callable[[UnitVote], bool] | None = None,
    code: Callable[[UnitVote], frozenset[str] | None] | None = None,
) -> list[Ranked]:
    """A search's fused units (each with its namesakes) in their final order: ``findings``
    are rg's, ``files`` the fused file order, ``read`` a unit's words, ``size`` its lines,
    ``head`` its names, signature and docstring words, ``code`` its words without string
    literals (``asks_code``), ``setter`` whether it is a builder's setter
    (``function_signals.is_setter``), ``weights`` the signals' (``IndexTuning.signals``).

    Namesakes (``fuse.with_namesakes``: one file's functions of one name) enter the pool
    together, and each is scored on its own: the fused order let the best-fused stand for
    them, so ``AHNet.__init__`` hid ``PSP.__init__``, which holds the ``up_modules`` that
    MONAI's "Missing up_modules in AHNet" asks about (``_grouped`` says how they are listed).
    Scored one by one, they find more of the gold functions of issue titles and lose none
    of the Answers (``bench/results/function-signals.md``, ``python -m bench.localization``)."""
    flat = [v for vote, namesakes in units for v in (vote, *namesakes)]
    candidates = [
        Candidate(
            file=v.file,
            qualname=v.qualname,
            fused=v.fused,
            setter=setter is not None and question.behaviour and setter(v),
        )
        for v in flat
    ]
    hits = [
        Hit(
            file=f.file,
            scope=rg_scope_key(f.file, f.containing_scope),
            category=f.category,
            text=f.text,
        )
        for f in findings
        if f.containing_scope
    ]
    held = [read(v) for v in flat]
    sizes = [size(v) for v in flat] if size is not None and question.one_line else None
    heads = [head(v) for v in flat] if head is not None and question.one_line else None
    coded = [code(v) for v in flat] if code is not None and asks_code(question) else None
    found = measured(
        candidates, question, hits, files, held, sizes, heads, coded, tests_wanted=tests_wanted
    )
    return _grouped([(flat[s.at], s) for s in ordered(found, weights)])


def _grouped(order: Sequence[tuple[UnitVote, Scored]]) -> list[Ranked]:
    """``order`` (best first) listed: a Rust file's functions of one name are one entry led
    by the best scored (one trait's method implemented by each type of the file, clap's 12
    ``possible_values``, is one place to read); Python's are each listed, since they are
    methods of different classes (every ``__init__`` of a module of layers), each its own
    place to fix. Grouping Python's too, led by the best, lowered function Hit@5 on the
    python_tuning sample (its figures: bench/results/2026-11-29-figures-from-cq.md)."""
    out: list[Ranked] = []
    lead: dict[tuple[str, str], Ranked] = {}
    for vote, scored in order:
        key = (vote.file, last_name(vote.qualname) if is_rust(vote.file) else vote.qualname)
        if key in lead:
            lead[key].namesakes.append(vote)
            continue
        lead[key] = Ranked(vote=vote, namesakes=[], scored=scored)
        out.append(lead[key])
    return out
