"""Scoring of the everyday-question set (``bench/everyday.py``): what a report answered, whether
that is a gold answer, and the tables.

A question's gold is a list of acceptable answers, each either a function or class,
``path::Qualified.name`` (``path::Type::method`` in Rust), or a place, ``path:line`` (a use or
import site). What a report says is read as **places**, each a file, a line and, when it sits in
or is a function, a key ``path::Qualified.name``:

- **Answer@1**: the report's Answer is a gold answer. The Answer's place: a definition Answer
  is the definition (its key is the defined name); a callers Answer is its first callsite (its
  key is the function holding that call); a best hit with no definition is that hit (the key of
  the function holding it). A JSON ``answer`` object (kind, name, file, line), when the report
  has one, is read as it says.
- **top-5**: a gold answer among the first five distinct places in the order the report shows
  them: the Answer, then the Relevant Functions, then the findings in rank order (a definition
  finding is its own name, any other finding the function holding it). For a question whose gold
  is places (``usage``), Relevant Functions are skipped (they are functions, never sites) and
  places are distinct by file and line, not by the function holding them.

Matching: a key matches a gold ``path::Name`` when the paths are equal and the names are equal,
or one is the other with more leading qualifiers (``Schema._do_load`` and ``_do_load``,
``mod::Type::f`` and ``Type::f``); for every kind but ``definition`` a key nested inside the gold
(``Checkpoint.__call__.wrapper``) matches too. Rust keys read an ``impl Trait for Type<T>``
header as ``Type`` (``_loc.rust_scope``). A place matches a gold ``path:line`` when the paths are
equal and the lines differ by at most one.
"""

from __future__ import annotations

import gzip
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import msgspec

from bench import _loc

KINDS = ("definition", "callers", "usage", "concept", "error", "title")
TOP = 5
LINE_SLACK = 1


class Question(msgspec.Struct, frozen=True):
    """One row of ``bench/data/everyday.jsonl``."""

    id: str
    repo: str  # the tree's name under --trees
    kind: str
    query: str
    gold: list[str]
    reason: str


class Place(msgspec.Struct, frozen=True):
    """Somewhere a report points: ``key`` is ``path::Qualified.name`` ("" at module level)."""

    file: str
    line: int
    key: str = ""

    def label(self) -> str:
        return self.key or f"{self.file}:{self.line}"


class Outcome(msgspec.Struct, frozen=True):
    """One question's result."""

    id: str
    repo: str
    kind: str
    query: str
    gold: list[str]
    answer_kind: str  # the Answer's kind (definition, callers, best_hit, ...; "" none)
    answer: Place | None
    top: list[Place]  # the first TOP distinct places (Answer, Relevant Functions, findings)
    ans: bool  # Answer@1
    top5: bool
    seconds: float = 0.0
    note: str = ""  # how the Answer was read (json-answer, derived), or why there is none


class RunFile(msgspec.Struct):
    """What ``--json-out`` writes."""

    data: str
    options: list[str]
    outcomes: list[Outcome]


def load_questions(path: str) -> list[Question]:
    return [
        msgspec.json.decode(line, type=Question)
        for line in Path(path).read_text().splitlines()
        if line.strip()
    ]


def normal_key(key: str) -> str:
    """A Rust key with its impl header read as the self type; a Python key as it is."""
    return _loc.rust_scope(key) if ".rs::" in key else key


def key_matches(key: str, gold: str, nested: bool) -> bool:
    """``key`` (``path::name``) names the gold function or class ``gold``."""
    path, _, name = normal_key(key).partition("::")
    gold_path, _, gold_name = gold.partition("::")
    if not name or path != gold_path:
        return False
    sep = "::" if path.endswith(".rs") else "."
    if name == gold_name or name.endswith(sep + gold_name) or gold_name.endswith(sep + name):
        return True
    return nested and name.startswith(gold_name + sep)


def is_place_gold(gold: str) -> bool:
    """``path:line`` (a site) rather than ``path::Name`` (a function or class)."""
    if "::" in gold:
        return False
    _, sep, line = gold.rpartition(":")
    return bool(sep) and line.isdigit()


def all_place_golds(golds: Iterable[str]) -> bool:
    """Every gold is a site (a ``usage`` question): Relevant Functions cannot match."""
    golds = list(golds)
    return bool(golds) and all(is_place_gold(g) for g in golds)


def place_matches(place: Place, gold: str, nested: bool) -> bool:
    if is_place_gold(gold):
        path, _, line = gold.rpartition(":")
        return place.file == path and abs(place.line - int(line)) <= LINE_SLACK
    return bool(place.key) and key_matches(place.key, gold, nested)


def matches(place: Place | None, golds: Iterable[str], kind: str) -> bool:
    nested = kind != "definition"
    return place is not None and any(place_matches(place, g, nested) for g in golds)


def first_places(places: Iterable[Place], n: int = TOP, sites: bool = False) -> list[Place]:
    """The first ``n`` distinct places: distinct by key (else by file and line), or with
    ``sites`` (a question whose golds are sites) by file and line, so two calls in one
    function, or a function and a call inside it, stay two places."""
    seen: set[str] = set()
    out: list[Place] = []
    for place in places:
        label = f"{place.file}:{place.line}" if sites else place.label()
        if label in seen:
            continue
        seen.add(label)
        out.append(place)
        if len(out) == n:
            break
    return out


# --- tables ---------------------------------------------------------------------------------


def _pct(num: int, den: int) -> str:
    return f"{100 * num / den:.1f}" if den else "-"


def _row(label: str, group: list[Outcome]) -> str:
    n = len(group)
    a = sum(o.ans for o in group)
    t = sum(o.top5 for o in group)
    return f"| {label} | {n} | {_pct(a, n)} | {_pct(t, n)} |"


def table(outcomes: list[Outcome], by: str) -> str:
    """Answer@1 and top-5 (percent) per ``by`` ("kind" or "repo") and pooled."""
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        groups[getattr(o, by)].append(o)
    order = (
        [k for k in KINDS if k in groups]
        if by == "kind"
        else sorted(groups, key=lambda r: (-len(groups[r]), r.lower()))
    )
    lines = [f"| {by} | n | Answer@1 | top-5 |", "|---|---|---|---|"]
    lines += [_row(k, groups[k]) for k in order]
    lines.append(_row("**pooled**", outcomes))
    return "\n".join(lines)


def by_repo_table(outcomes: list[Outcome]) -> str:
    """Answer@1 / top-5 (percent, n) of every repository and kind: the figure each repository
    contributes, to set beside a leave-one-repository-out figure of tuned numbers."""
    repos = sorted({o.repo for o in outcomes}, key=str.lower)
    kinds = [k for k in KINDS if any(o.kind == k for o in outcomes)]
    lines = [
        "| repo | " + " | ".join(kinds) + " | all |",
        "|---|" + "---|" * (len(kinds) + 1),
    ]
    for repo in repos:
        cells = []
        for kind in [*kinds, None]:
            group = [o for o in outcomes if o.repo == repo and (kind is None or o.kind == kind)]
            n = len(group)
            cells.append(
                f"{_pct(sum(o.ans for o in group), n)} / {_pct(sum(o.top5 for o in group), n)}"
                f" ({n})"
                if n
                else "-"
            )
        lines.append(f"| {repo} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def verbose_lines(outcomes: list[Outcome]) -> Iterable[str]:
    for o in outcomes:
        mark = ("A" if o.ans else "-") + ("T" if o.top5 else "-")
        said = o.answer.label() if o.answer else f"({o.answer_kind or 'none'})"
        yield f"  {mark} {o.id:16} {o.kind:10} {o.seconds:6.2f}s {said}  <- {o.query[:60]}"


# --- result files ---------------------------------------------------------------------------


def write(path: str, run: RunFile) -> None:
    data = msgspec.json.encode(run) + b"\n"
    Path(path).write_bytes(gzip.compress(data, mtime=0) if path.endswith(".gz") else data)


def read(path: str) -> RunFile:
    data = Path(path).read_bytes()
    data = gzip.decompress(data) if path.endswith(".gz") else data
    return msgspec.json.decode(data, type=RunFile)


def compare(before: RunFile, after: RunFile) -> str:
    """The questions whose Answer@1 or top-5 changed, worse first, with both Answers."""
    old = {o.id: o for o in before.outcomes}
    worse, better = [], []
    for o in after.outcomes:
        b = old.get(o.id)
        if b is None or (b.ans, b.top5) == (o.ans, o.top5):
            continue
        gained = (o.ans - b.ans, o.top5 - b.top5)
        line = (
            f"- {o.id} ({o.kind}) {o.query[:70]!r}: Answer@1 {int(b.ans)}->{int(o.ans)}, "
            f"top-5 {int(b.top5)}->{int(o.top5)}; was {_said(b)}, now {_said(o)}"
        )
        (worse if min(gained) < 0 and sum(gained) <= 0 else better).append(line)
    pooled = [
        f"before: Answer@1 {_pct(sum(o.ans for o in before.outcomes), len(before.outcomes))}, "
        f"top-5 {_pct(sum(o.top5 for o in before.outcomes), len(before.outcomes))} "
        f"({len(before.outcomes)})",
        f"after:  Answer@1 {_pct(sum(o.ans for o in after.outcomes), len(after.outcomes))}, "
        f"top-5 {_pct(sum(o.top5 for o in after.outcomes), len(after.outcomes))} "
        f"({len(after.outcomes)})",
    ]
    return "\n".join(
        [
            *pooled,
            f"worse ({len(worse)}):",
            *worse,
            f"better ({len(better)}):",
            *better,
        ]
    )


def _said(o: Outcome) -> str:
    return o.answer.label() if o.answer else f"({o.answer_kind or 'none'})"
