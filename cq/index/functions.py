"""Relevant Functions' final order: which function a question's answer is, and why.

The fused unit order (``fuse.py``, reread by ``coverage.py``) ranks a function by a bag of
words: its text, its file's place, rg's finding order. What a bag of words does not know, a
question often says outright, and cq has read it: a traceback's frames name the functions the
error passed through (``Mentions.frame_functions``, their files ``frame_paths``); a text
writes the name of the function it is about as code (``Mentions.code_names``,
``prose_names``); a function's own name says what it does, so "how are buckets created?" is
about ``create_bucket``, not ``list_table_buckets`` (whose body merely says bucket); and rg's
classified hits inside a function (definitions, calls of the names the rewriter asked) tell
where the asked names are used. Each candidate gets these signals; its final score is its
fused score (relative to the first's) plus the weighted signals, and the signals that
moved it are kept as its evidence (the report shows the Answer's, JSON keeps every score).

Pure over plain data, so ``bench/studies/function_answer.py`` replays saved reports with
exactly this code. Weights: ``SignalWeights`` (their notes say where they come from).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

import msgspec

from cq.index.coverage import coverage
from cq.index.fuse import UnitVote
from cq.index.scopes import rg_scope_key
from cq.model import Finding
from cq.rank import path_role
from cq.rewrite import Mentions, split_dotted, stem, subwords


class SignalWeights(msgspec.Struct, frozen=True, kw_only=True):
    """How much each signal adds to a candidate's relative fused score (0-1)."""

    frame: float = 2.0
    written: float = 0.2
    guessed: float = 0.0
    owner: float = 0.1
    name: float = 0.0
    inside: float = 0.2
    file: float = 0.1
    covers: float = 0.8
    test: float = -0.3


WEIGHTS = SignalWeights()


class Candidate(msgspec.Struct, frozen=True, kw_only=True):
    """A Relevant Function candidate as fused: its file, qualified name, fused score."""

    file: str
    qualname: str
    fused: float


class Hit(msgspec.Struct, frozen=True, kw_only=True):
    """One of rg's classified findings: its file, its containing scope (as the index names
    it), its category, the matched text."""

    file: str
    scope: str
    category: str
    text: str


class Asked(msgspec.Struct, frozen=True, kw_only=True):
    """What the question says, read once for all candidates."""

    words: dict[str, float]  # the words the index was asked, with their weights
    stems: dict[str, float]  # the same by stem, each at its largest weight
    written: frozenset[str]  # names the text writes as code (last parts)
    frames: tuple[str, ...]  # traceback frame functions, innermost last
    frame_paths: tuple[str, ...]  # their files, as printed
    guessed: tuple[str, ...] = ()  # the rewriter's names (last parts), best first


class Scored(msgspec.Struct, frozen=True, kw_only=True):
    """A candidate's place: its index in the fused list, the final score, each signal's
    value (0-1, before weighting) and the evidence a reader is shown."""

    at: int
    score: float
    signals: dict[str, float]
    evidence: tuple[str, ...]


def asked(
    text: str,
    words: Mapping[str, float],
    guessed: Sequence[str] = (),
    mentions: Mentions | None = None,
) -> Asked:
    """The question's signals: ``words`` as the index was asked, ``guessed`` the names the
    rewriter searched for (best first), ``text`` read for names."""
    m = mentions if mentions is not None else _mentions(text)
    stems: dict[str, float] = {}
    for word, weight in words.items():
        key = stem(word)
        stems[key] = max(stems.get(key, 0.0), weight)
    written = {split_dotted(n)[-1] for n in (*m.code_names, *m.prose_names) if split_dotted(n)}
    return Asked(
        words=dict(words),
        stems=stems,
        written=frozenset(written),
        frames=m.frame_functions,
        frame_paths=m.frame_paths,
        guessed=tuple(dict.fromkeys(split_dotted(n)[-1] for n in guessed if split_dotted(n))),
    )


def _mentions(text: str) -> Mentions:
    from cq.rewrite import extract_mentions

    return extract_mentions(text)


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
    *,
    tests_wanted: bool = False,
) -> list[Scored]:
    """Each candidate's signals and evidence, in fused order (no score yet); ``files``: the
    search's file order (its findings' files, best first); ``held``: each candidate's words
    (``coverage.unit_words``; None: its text was not found), for its share of the question."""
    file_rank = {f: i for i, f in enumerate(files, 1)}
    shares = coverage(question.words, held) if held else [0.0] * len(candidates)
    if not candidates:
        return []
    inside = _inside(candidates, hits)
    top = max(c.fused for c in candidates) or 1.0
    most_inside = max(inside) or 1
    out = []
    for i, c in enumerate(candidates):
        name = _last(c.qualname)
        signals = {
            "fused": round(c.fused / top, 6),
            "frame": _frame(c, name, question),
            "written": 1.0 if name in question.written else 0.0,
            "guessed": _guessed(name, question.guessed),
            "owner": 1.0 if _owner(c.qualname) in question.written else 0.0,
            "name": _name_share(name, question.stems),
            "inside": round(math.log1p(inside[i]) / math.log1p(most_inside), 6),
            "covers": round(shares[i], 6),
            "file": round(1.0 / file_rank[c.file], 6) if c.file in file_rank else 0.0,
            "test": 0.0 if tests_wanted or not _is_test(c) else 1.0,
        }
        evidence = _evidence(name, signals, question, inside[i])
        out.append(Scored(at=i, score=0.0, signals=signals, evidence=evidence))
    return out


def ordered(measured: Sequence[Scored], weights: SignalWeights = WEIGHTS) -> list[Scored]:
    """``measured`` candidates scored, best first: the relative fused score plus each
    signal times its weight."""
    out = [
        msgspec.structs.replace(
            s,
            score=round(score_of(s.signals, weights), 6),
            evidence=tuple(
                e.split(":", 1)[1] for e in s.evidence if getattr(weights, e.split(":", 1)[0]) > 0
            ),
        )
        for s in measured
    ]
    return sorted(out, key=lambda s: (-s.score, s.at))


def score_of(signals: Mapping[str, float], weights: SignalWeights) -> float:
    return signals["fused"] + sum(
        getattr(weights, k) * v for k, v in signals.items() if k != "fused"
    )


def _last(qualname: str) -> str:
    return qualname.replace("::", ".").rsplit(".", 1)[-1]


def _owner(qualname: str) -> str:
    """The class or type a method belongs to ("" for a free function)."""
    parts = qualname.replace("::", ".").split(".")
    return parts[-2] if len(parts) > 1 else ""


def _is_test(c: Candidate) -> bool:
    return path_role(c.file) == "test" or _last(c.qualname).startswith("test_")


def _frame(c: Candidate, name: str, question: Asked) -> float:
    """1 for the innermost traceback frame naming this function in its file, less for each
    frame further out (0.8 each: hand-set); 0 when no frame names it."""
    best = 0.0
    n = len(question.frames)
    for depth, fn in enumerate(reversed(question.frames)):
        if fn != name:
            continue
        if question.frame_paths and not any(_same_file(c.file, p) for p in question.frame_paths):
            continue
        best = max(best, 0.8**depth)
        break
    return round(best, 6) if n else 0.0


def _same_file(path: str, printed: str) -> bool:
    """A printed frame path ends with the tree's path, or with its last two parts."""
    printed = printed.replace("\\", "/")
    if printed.endswith("/" + path) or printed == path:
        return True
    tail = "/".join(path.split("/")[-2:])
    return printed.endswith("/" + tail) or printed == tail


def _name_share(name: str, stems: Mapping[str, float]) -> float:
    """The share of the name's words the question asks: ``create_bucket`` says only what
    "how are buckets created?" asks, ``list_table_buckets`` one word of three."""
    parts = [stem(w) for w in subwords(name) if len(w) > 1]
    if not parts:
        return 0.0
    return round(sum(1 for p in parts if p in stems) / len(parts), 6)


def _inside(candidates: Sequence[Candidate], hits: Iterable[Hit]) -> list[int]:
    """rg's findings inside each candidate other than its own definition line."""
    at = {(c.file, c.qualname): i for i, c in enumerate(candidates)}
    counts = [0] * len(candidates)
    for h in hits:
        i = at.get((h.file, h.scope))
        if i is None:
            continue
        if h.category == "definition" and _last(h.text) == _last(candidates[i].qualname):
            continue
        counts[i] += 1
    return counts


def _evidence(
    name: str, signals: Mapping[str, float], question: Asked, inside: int
) -> tuple[str, ...]:
    """Each signal that holds, in words, led by the signal's name (``ordered`` keeps those
    that carry weight, without the name)."""
    out = []
    if signals["frame"]:
        out.append(f"frame:a traceback frame names {name}")
    if signals["written"]:
        out.append(f"written:the text writes {name}")
    if signals["guessed"]:
        out.append(f"guessed:the rewriter searched for {name}")
    if signals["owner"]:
        out.append("owner:the text writes its class")
    if signals["name"]:
        parts = [w for w in subwords(name) if len(w) > 1 and stem(w) in question.stems]
        out.append("name:its name says " + ", ".join(dict.fromkeys(parts)))
    if inside:
        out.append(f"inside:{inside} of rg's hits inside")
    if signals["covers"] >= 0.5:  # hand-set: said only when it holds most of the question
        out.append(
            f"covers:its text holds {round(100 * signals['covers'])}% of the question's words"
        )
    if signals["file"] == 1.0:
        out.append("file:its file ranks first")
    return tuple(out)


def _guessed(name: str, guessed: Sequence[str]) -> float:
    """1 for the rewriter's first name, less for each later one (1 / place); 0: not among
    them."""
    return round(1.0 / (guessed.index(name) + 1), 6) if name in guessed else 0.0


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
    *,
    tests_wanted: bool = False,
) -> list[Ranked]:
    """A search's fused units (each with its namesakes) in their final order: ``findings``
    are rg's, ``files`` the fused file order, ``read`` a unit's words."""
    candidates = [Candidate(file=v.file, qualname=v.qualname, fused=v.fused) for v, _ in units]
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
    held = [read(v) for v, _ in units]
    found = measured(candidates, question, hits, files, held, tests_wanted=tests_wanted)
    return [Ranked(vote=units[s.at][0], namesakes=units[s.at][1], scored=s) for s in ordered(found)]
