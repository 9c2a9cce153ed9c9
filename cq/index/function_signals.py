"""The signals Relevant Functions are reordered by (``functions.measured``), one pure reader
each over the candidate (``Candidate``), rg's hits (``Hit``) and what the question says
(``Asked``): what a question says outright about a candidate function, 0-1 before weighting,
and the words that say so to a reader (``evidence``). Their weights and measurements are in
``functions.py``."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence

import msgspec

from cq.model.language import is_rust
from cq.rank import last_name, path_role
from cq.rewrite import name_stems, stem, subwords


class Candidate(msgspec.Struct, frozen=True, kw_only=True):
    """A Relevant Function candidate as fused: its file, qualified name, fused score."""

    file: str
    qualname: str
    fused: float
    # a builder's setter or a named constructor (``is_setter``, ``makes_self``): it stores
    # what it is given
    setter: bool = False


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
    spelled: dict[str, str]  # each stem as the question spells it (its heaviest word)
    written: frozenset[str]  # names the text writes as code (last parts)
    frames: tuple[str, ...]  # traceback frame functions, innermost last
    frame_paths: tuple[str, ...]  # their files, as printed
    messages: frozenset[str] = frozenset()  # messages the text quotes, lowercased
    one_line: bool = False  # a title or a one-line question (``query.is_one_line``)
    behaviour: bool = False  # a question led by a question word (``asks_about_behaviour``)
    content: frozenset[str] = frozenset()  # a one-line question's stems (``Question.content``)


def sizes(lengths: Sequence[int] | None, n: int) -> list[float]:
    """Each candidate's length, ``log(1 + lines)`` over the longest's (0-1): a one-line
    question (an issue's title) names what goes wrong in a few words that many candidates hold
    alike, and a fix lands in a long function more often than in a short one. It orders the
    Relevant Functions after the Answer, not the Answer: ordering the Answer by it as well
    lost Answers, and on issue texts it lowers both, so it is 0 for them (``Asked.one_line``).
    Measured by ``python -m bench.studies.function_answer --probe``
    (``bench/results/function-signals.md``)."""
    if not lengths:
        return [0.0] * n
    top = math.log1p(max(lengths))
    return [round(math.log1p(x) / top, 6) if top else 0.0 for x in lengths]


def message(inside: list[str], question: Asked) -> float:
    """1 when rg found, inside the function, a message the text quotes (an error line's, or a
    phrase in quotes, ``Mentions.messages``): the program printed it from there. Its weight was
    hand-set; 0.5 and 2.0 measured the same (``bench/results/function-signals.md``,
    ``python -m bench.localization``): few titles quote a phrase, many texts an error line."""
    if not question.messages:
        return 0.0
    return 1.0 if any(text.lower() in question.messages for text in inside) else 0.0


def constructor(c: Candidate, name: str, question: Asked) -> float:
    """1 for a constructor (``__init__``, ``__new__``; a Rust ``new``) when the question asks
    how something behaves: a constructor stores what it is given, the code that does what a
    how-question asks runs later, yet it often holds the class's words (its docstring, its
    parameters). Of the 288 blind questions' Answers (``bench/data/questions-blind*.jsonl``,
    ``bench.studies.question_answers``), 15 were constructors and none was right; issue titles
    differ (20 of 60 right): a report's fix often adds a parameter or changes a default."""
    if not question.behaviour:
        return 0.0
    made = name == "new" if is_rust(c.file) else name in ("__init__", "__new__")
    made = made or c.setter or _makes_error(name, question)
    return 1.0 if made else 0.0  # an indicator, not a weight: its weight is tuned


# The last subwords of a function named for the error it makes
_ERROR_WORDS = ("error", "err", "exception")
# A subword anywhere in the name of a function that stops the program when a check fails
_PANIC_WORDS = ("panic",)


def _makes_error(name: str, question: Asked) -> bool:
    """Whether a function is named for the error it makes (``missing_required_error``,
    ``invalid_value_err``) or for the panic it raises (``_panic_on_missing_help``) when the
    question does not ask about errors or panics: it builds the message for a condition its
    caller found, or asserts one the program's author must not leave, and holds the
    condition's words in its name and message ("how are missing required arguments
    detected": ``validate_required`` detects them; clap's debug assertion that a help flag
    exists says "missing" as well). Asked about errors ("how are validation errors
    combined"), it may answer."""
    words = subwords(name)
    if not words or (words[-1] not in _ERROR_WORDS and not set(_PANIC_WORDS) & set(words)):
        return False
    return not question.content & {stem(w) for w in (*_ERROR_WORDS, *_PANIC_WORDS)}


# Directories a project keeps code beside its own in: contributed or incubating modules
# (``contrib``, ``nursery``, ``sandbox``, ``experimental``), and programs that use the
# project (``examples``, ``tutorials``, ``benchmarks``)
ASIDE_DIRS = frozenset(
    {
        "contrib",
        "nursery",
        "sandbox",
        "experimental",
        "example",
        "examples",
        "tutorials",
        "benchmarks",
    }
)


def aside(c: Candidate, question: Asked) -> float:
    """1 for a function in a directory of code kept beside the project's own (``ASIDE_DIRS``)
    when a one-line question asks (``Asked.content``): a question about the tree asks how the
    project does it, and a contributed helper that wires the project's class up (ignite's
    ``contrib.engines.common.add_early_stopping_by_val_score`` for "how does training stop
    when the validation score stops improving", which ``EarlyStopping.__call__`` does), a
    teaching copy (pyro's ``contrib/minipyro.py``) or an example's ``main`` says the
    question's words as often. A question that names the directory ("how does the contrib
    tqdm logger ...", "how do the examples ...") asks about that code, which is then not
    aside. It weighs on the Answer only, as ``constructor`` does."""
    if not question.content:
        return 0.0  # an indicator: no one-line question, nothing is aside
    dirs = c.file.lower().split("/")[:-1]
    side = any(d in ASIDE_DIRS and stem(d) not in question.content for d in dirs)
    return 1.0 if side else 0.0  # an indicator; its weight: aside


def variants(candidates: Sequence[Candidate], question: Asked) -> list[float]:
    """1 for each method of a class whose name is another candidate's class's name, which
    the question says, with words the question does not say: ``TraceGraph_ELBO`` beside
    ``Trace_ELBO`` for "how is the ELBO gradient estimated", ``MultivariateEvaluator``
    beside ``Evaluator`` for "how does the evaluator compute metrics". A question naming
    the general class asks how it does the thing; the variant does it for a case the
    question did not ask about, yet holds the same words and often outscores it. A question
    that says the variant's word ("a quantile from forecast samples": ``SampleForecast``)
    asks about the variant. It weighs on the Answer only, as ``constructor`` does."""
    if not question.content:
        return [0.0] * len(candidates)  # no one-line question: nothing is a variant
    kinds = [name_stems(_type_name(c.qualname)) for c in candidates]
    # a class kept aside (``aside``: pyro's ``contrib/funsor`` ``ELBO``) is no general
    # class of the project's: its words do not make the project's classes variants
    named = {
        k
        for k, c in zip(kinds, candidates, strict=True)
        if k & question.content and not aside(c, question)
    }
    return [
        # an indicator (1: a variant, 0: not); its weight is ``SignalWeights.variant``
        1.0 if any(g < k and not (k - g) & question.content for g in named) else 0.0
        for k in kinds
    ]


def _type_name(qualname: str) -> str:
    """The class or type a method belongs to, a Rust ``impl Trait for Type``'s type."""
    return owner(qualname).split(" for ")[-1].removeprefix("impl ").strip()


# A Rust builder's setter: takes the receiver (``self``, ``mut self``, ``&mut self``) and at
# least one argument, and hands the receiver back (``-> Self``, ``-> &mut Self``), the shape
# of every builder method; ``-> Self::Output`` (an operator) is no such shape
_SETTER = re.compile(
    r"\(\s*(?:mut\s+)?(?:&\s*mut\s+)?self\s*,\s*\w.*\)\s*->\s*(?:&\s*mut\s+)?Self\s*(?:where\b.*)?$"
)


# A Rust associated function without a receiver that hands back ``Self``: a named
# constructor (``fn with_capacity(n: usize) -> Self``)
_MAKES_SELF = re.compile(r"\bfn\s+\w+[^(]*\((?![^)]*\bself\b)[^)]*\)\s*->\s*Self\b")


def makes_self(signature: str, rust: bool) -> bool:
    """Whether a function is a Rust named constructor (no receiver, ``-> Self``), which a
    how-question's Answer is not, as ``new`` is not (``constructor``): it stores what it is
    given (``Error::missing_required_argument`` builds the error that ``validate_required``
    raises on finding the arguments missing)."""
    return rust and bool(_MAKES_SELF.search(signature.strip()))


def is_setter(signature: str, rust: bool) -> bool:
    """Whether a function is a builder's setter, which a how-question's Answer is not, as a
    constructor is not (``constructor``): it stores its argument in the value it builds and
    returns it, and the code that does what the question asks reads that setting later. A
    builder's setters are documented at length for the library's users (what the setting
    does, with examples), so they hold a how-question's words more than the parser or the
    validator that acts on them. Rust only: the signature says it (``fn timeout(mut self,
    secs: u64) -> Self``); a Python setter's shape (assignments to ``self``, then ``return
    self``) is rare and says less."""
    return rust and bool(_SETTER.search(signature.strip()))


def named(name: str, question: Asked) -> float:
    """1 when the function's name is the question's words and no more: "how are buckets
    created?" asks for ``create_bucket``, not ``_create_underlying_bucket``, which holds the
    same words and others, nor ``create_table_bucket``, whose file ranks first. A name that
    holds only some of the question's words, or all of them among others, is no such
    evidence: scoring by the share of a name the question's words make up lowered the
    everyday questions' Answers (``bench/results/2026-11-29-everyday-answer3/``)."""
    if not question.content or name.startswith("__"):
        return 0.0
    return 1.0 if name_stems(name) == question.content else 0.0


def names_container(qualname: str, question: Asked) -> bool:
    """Whether a question names this class (or Rust type) itself, so that it may be a
    Relevant Function and the Answer: its name's words are exactly the question's ("where is
    the botocore stubber class" -> ``BotocoreStubber``; the kind word aside, ``asked``). Any
    other class stays out of the list (``fuse._container``): where a function lives, not
    where to start. A class a text merely writes as code is no such evidence: a title
    naming the exception it expected ("... OverflowError ... instead of ValidationError")
    made ``ValidationError`` marshmallow's Answer (bench/results/2026-11-29-everyday-answer4/)."""
    name = last_name(qualname)
    return bool(question.content) and name_stems(name) == question.content


def owner(qualname: str) -> str:
    """The class or type a method belongs to ("" for a free function)."""
    parts = qualname.replace("::", ".").split(".")
    return parts[-2] if len(parts) > 1 else ""


def is_test(c: Candidate) -> bool:
    return path_role(c.file) == "test" or last_name(c.qualname).startswith("test_")


# ``frame``'s value for the traceback's innermost frame (0.8 ** 0): a definition, not a tuned
# number; the Relevant Functions pool keeps the function it names (``index.apply``)
INNERMOST_FRAME = 1.0


def frame(c: Candidate, name: str, question: Asked) -> float:
    """1 for the innermost traceback frame naming this function in its file, less for each
    frame further out (0.8 each: hand-set); 0 when no frame names it."""
    best = 0.0
    n = len(question.frames)
    for depth, fn in enumerate(reversed(question.frames)):
        if fn != name:
            continue
        if question.frame_paths and not any(_same_file(c.file, p) for p in question.frame_paths):
            continue
        best = max(best, INNERMOST_FRAME * 0.8**depth)
        break
    return round(best, 6) if n else 0.0


def _same_file(path: str, printed: str) -> bool:
    """A printed frame path ends with the tree's path, or with its last two parts."""
    printed = printed.replace("\\", "/")
    if printed.endswith("/" + path) or printed == path:
        return True
    tail = "/".join(path.split("/")[-2:])
    return printed.endswith("/" + tail) or printed == tail


def inside(candidates: Sequence[Candidate], hits: Iterable[Hit]) -> list[list[str]]:
    """The matched text of each of rg's findings inside each candidate, its own definition
    line too: a pattern that matched the function's name says more than one that matched a
    call in its caller (``Store.insert_edge`` lost to its 60 callers without it). Counting it helped
    Python issue texts and moved the rest little (``bench/results/function-signals.md``)."""
    at = {(c.file, c.qualname): i for i, c in enumerate(candidates)}
    found: list[list[str]] = [[] for _ in candidates]
    for h in hits:
        i = at.get((h.file, h.scope))
        if i is None:
            continue
        found[i].append(h.text)
    return found


def words_held(question: Asked, held: frozenset[str] | None, most: int = 4) -> list[str]:
    """The question's heaviest words the candidate's text holds, as the question spells
    them (``most``: hand-set, a line's worth)."""
    if not held:
        return []
    stems = sorted((s for s in question.stems if s in held), key=lambda s: -question.stems[s])
    return [question.spelled[s] for s in stems[:most]]


def evidence(
    name: str, signals: Mapping[str, float], inside: list[str], words: list[str]
) -> tuple[str, ...]:
    """Each signal that holds, in words, led by the signal's name (``ordered`` keeps those
    that carry weight, without the name)."""
    out = []
    if signals["frame"]:
        out.append(f"frame:a traceback frame names {name}")
    if signals["written"]:
        out.append(f"written:the text writes {name}")
    if signals.get("named"):
        out.append("named:its name is the question's words")
    if signals["message"]:
        out.append("message:it holds a message the text quotes")
    if signals["owner"]:
        out.append("owner:the text writes its class")
    if inside:
        names = ", ".join(list(dict.fromkeys(inside))[:3])
        out.append(f"inside:{len(inside)} of rg's hits inside ({names})")
    if words:
        share = round(100 * signals["covers"])
        # stems, not spellings, match ("implemented" and ``RequestImpl`` share "impl"): the
        # evidence says so rather than claim the text spells the question's words
        listed = ", ".join(words)
        out.append(
            f"covers:its words share stems with {listed} ({share}% of the question's weight)"
        )
    if signals["file"] == 1.0:
        out.append("file:its file ranks first")
    return tuple(out)
