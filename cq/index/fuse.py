"""Fuse rg's file order with the index's: weighted reciprocal-rank fusion.

Pure functions over ranks, shared by the pipeline (``apply.py``) and the tuning bench
(bench/studies/index_fusion.py), so the bench measures exactly what a search does.

The index's own file order fuses its two granularities the same way: a file's rank among file
documents and the rank of its best unit among unit documents. The numbers (``Fusion``, one for
Python questions and one for the rest) are ``Tuning.index``'s (``cq/model/index_tuning.py``);
tests, docs and vendored code are demoted by the rank's role multipliers (``rank.role``).
A Rust question's fused scores are also weighed by a file prior (``file_prior``: size and the
index's units in the file).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import msgspec

from cq.index.query import IndexHit, IndexHits
from cq.model.index_tuning import Fusion, IndexTuning
from cq.model.language import is_python_module, is_rust
from cq.model.ranking import DEFAULT_ROLE_MULTIPLIERS
from cq.rank import last_name, path_role

DEFAULT = IndexTuning().fusion


def fusion_for(rg_files: list[str], hits: IndexHits, tuning: IndexTuning | None = None) -> Fusion:
    """The Python fusion for a question about Python code (most of the files either signal
    found are Python), else Rust's (a one-line question's its own): each language's numbers
    come from its own sets."""
    tuning = tuning or IndexTuning()
    files = [*rg_files, *(h.path for h in hits.files)]
    rust = sum(is_rust(f) for f in files)
    if len(files) - rust > rust:
        return tuning.python
    return tuning.one_line if hits.one_line else tuning.fusion


def fusion_name(fusion: Fusion, tuning: IndexTuning) -> str:
    """The tuning field ``fusion`` is (``index.python``), as ``--explain`` names the weights."""
    fields = ("python", "fusion", "one_line")
    return next((f"index.{f}" for f in fields if getattr(tuning, f) is fusion), "index")


class FileVote(msgspec.Struct, frozen=True, kw_only=True):
    """One file's place in the fused order, with both signals (``--explain`` shows them)."""

    file: str
    fused: float
    rank_rg: int = 0  # 0: not among rg's files
    rank_index: int = 0  # 0: not among the index's files
    rank_named: int = 0  # 0: the text names no such file (traceback, path, module)
    rank_defined: int = 0  # 0: defines no name the text writes as code


def index_file_order(
    hits: IndexHits,
    fusion: Fusion = DEFAULT,
    roles: Mapping[str, float] = DEFAULT_ROLE_MULTIPLIERS,
) -> list[str]:
    """Files by fused rank of their file document and their best unit, tests, docs and
    vendored code demoted by cq's role multipliers (as rg's findings are).

    Test files' units are ranked after the other files' units: a test file is demoted anyway,
    and its many small units (one per test, each saying the issue's words) took the unit ranks
    of the source files (nushell's tests/test_signatures.rs held the first 5 units of a type
    annotation issue). It raised the Rust sets' fused file order
    (``bench/results/index-decisions.md``). Python's fusion gives units no vote
    (``index.python.w_units`` 0): unchanged there.
    """
    scores: dict[str, float] = {}
    for rank, hit in enumerate(hits.files, 1):
        scores[hit.path] = scores.get(hit.path, 0.0) + 1.0 / (fusion.k_units + rank)
    unit_files = list(dict.fromkeys(u.path for u in hits.units))
    if fusion.roles:
        unit_files.sort(key=lambda p: path_role(p) == "test")  # stable: ranks kept otherwise
    for rank, path in enumerate(unit_files, 1):
        scores[path] = scores.get(path, 0.0) + fusion.w_units / (fusion.k_units + rank)
    if fusion.roles:
        for path in scores:
            scores[path] *= roles[path_role(path)]
    return sorted(scores, key=lambda p: (-scores[p], p))


def fused_files(
    rg_files: list[str],
    index_files: list[str],
    fusion: Fusion = DEFAULT,
    hits: IndexHits | None = None,
    *,
    tests_wanted: bool = False,
    roles: Mapping[str, float] = DEFAULT_ROLE_MULTIPLIERS,
    sizes: Mapping[str, int] | None = None,
) -> list[FileVote]:
    """Every file of any order, best fused first (ties: rg's order, then path); ``hits``
    brings the files the text names and those defining its code names (Python), ``sizes``
    the files' bytes (the index's manifest) for the fusion's file prior (``file_prior``).

    Unless the question is about tests (``tests_wanted``: focus "tests"), a test file's fused
    score is multiplied by cq's test role multiplier (``roles``), as each order's own scores
    were: a rank fusion sees ranks only, so a test file both orders placed mid-list outranked
    a source file only one of them found. It raised every set's fused file order or kept it
    (``bench/results/index-decisions.md``). Docs and vendored code keep their ranks: demoting
    them too cost Python's file order.
    """
    named = [m.path for m in hits.named] if hits and fusion.w_named else []
    defined = [m.path for m in hits.defined] if hits and fusion.w_defined else []
    orders = (
        (fusion.w_rg, {f: i for i, f in enumerate(rg_files, 1)}),
        (fusion.w_index, {f: i for i, f in enumerate(index_files, 1)}),
        (fusion.w_named, {f: i for i, f in enumerate(named, 1)}),
        (fusion.w_defined, {f: i for i, f in enumerate(defined, 1)}),
    )
    test_factor = 1.0 if tests_wanted or not fusion.roles else roles["test"]
    prior = file_prior(fusion, hits, sizes)
    votes = []
    for f in dict.fromkeys([*rg_files, *index_files, *named, *defined]):
        ranks = [order.get(f, 0) for _, order in orders]
        score = sum(w / (fusion.k + r) for (w, _), r in zip(orders, ranks, strict=True) if r)
        r, x, n, d = ranks
        if test_factor != 1.0 and path_role(f) == "test":
            score *= test_factor
        score *= prior(f)
        votes.append(
            FileVote(
                file=f,
                fused=round(score, 6),
                rank_rg=r,
                rank_index=x,
                rank_named=n,
                rank_defined=d,
            )
        )
    return sorted(votes, key=lambda v: (-v.fused, v.rank_rg or 1 << 30, v.file))


SIZE_FLOOR = 1_000  # hand-set: a file under 1 kB counts as 1 kB (a stub is no less likely)
SIZE_REFERENCE = 10_000  # the prior is 1 for a 10 kB file (the order does not depend on it)


def file_prior(
    fusion: Fusion, hits: IndexHits | None, sizes: Mapping[str, int] | None
) -> Callable[[str], float]:
    """A file's fused score multiplier before any evidence of the question: bigger files and
    files holding several of the index's best units are fixed more often.

    Of a Rust question's fused first files, the big ones and those holding many of the
    index's best units were gold several times as often as the rest (``python -m
    bench.studies.rust_signals``; ``bench/results/index-decisions.md``).
    ``(bytes / 10 kB) ** fusion.size_exponent`` times ``1 + fusion.unit_votes * min(units,
    fusion.unit_votes_max)``; a file the manifest
    does not know counts as 10 kB. Weights: ``Fusion``'s notes."""
    a, per_unit, most = fusion.size_exponent, fusion.unit_votes, fusion.unit_votes_max
    if not a and not per_unit:
        return lambda path: 1.0
    known = sizes or {}
    units: dict[str, int] = {}
    for u in hits.units if hits else ():
        units[u.path] = units.get(u.path, 0) + 1

    def prior(path: str) -> float:
        size = max(known.get(path, SIZE_REFERENCE), SIZE_FLOOR)
        return (size / SIZE_REFERENCE) ** a * (1.0 + per_unit * min(units.get(path, 0), most))

    return prior


class UnitVote(msgspec.Struct, frozen=True, kw_only=True):
    """A candidate for Relevant Functions: an index unit, an rg scope, or both."""

    file: str
    qualname: str
    line: int = 0  # 0: known only from rg's scope (the pipeline looks the line up)
    kind: str = ""
    fused: float = 0.0
    rank_index: int = 0
    rank_rg: int = 0


def fused_units(
    units: tuple[IndexHit, ...],
    rg_scopes: list[tuple[str, str]],
    file_ranks: dict[str, int],
    fusion: Fusion = DEFAULT,
    *,
    tests_wanted: bool = False,
    roles: Mapping[str, float] = DEFAULT_ROLE_MULTIPLIERS,
    named: Callable[[str], bool] | None = None,
) -> list[UnitVote]:
    """Index units and rg's scopes (``(file, scope)`` in finding order) fused, best first; a
    unit is helped by its file's place in the fused file order too. Rust types and Python
    classes (``_container``) are left out: they are where a function lives, not where to
    start, unless the question names them (``named``, a qualified name's test,
    ``function_signals.names_container``: "where is the botocore stubber class" asks for
    ``BotocoreStubber`` itself, not its ``__call__``). With ``fusion.test_functions`` a
    test file's units, and a Rust file's ``mod tests`` ones, are demoted by ``roles`` (as
    the file order demotes test files) unless ``tests_wanted``.

    Unless ``tests_wanted``, a unit's place among the index's units is counted after the test
    files' units, as ``index_file_order`` counts files: a test holds a question's words in
    its name more often than the code it tests, and its place pushed that code down the
    list (``test_list_buckets_with_max_buckets`` before ``S3Backend.create_bucket``).
    The everyday set (``python -m bench.everyday``): bench/results/2026-11-29-answer5/."""
    test_factor = roles["test"] if fusion.test_functions and not tests_wanted else 1.0
    rg_rank: dict[tuple[str, str], int] = {}
    for file, scope in rg_scopes:
        rg_rank.setdefault((file, scope), len(rg_rank) + 1)
    if not tests_wanted:
        units = tuple(sorted(units, key=lambda u: path_role(u.path) == "test"))  # stable
    found: dict[tuple[str, str], UnitVote] = {}
    for rank, u in enumerate(units, 1):
        if u.kind != "module" and (u.path, u.qualname) not in found:
            found[(u.path, u.qualname)] = UnitVote(
                file=u.path, qualname=u.qualname, line=u.line, kind=u.kind, rank_index=rank
            )
    for key, rank in rg_rank.items():
        vote = found.get(key) or UnitVote(file=key[0], qualname=key[1])
        found[key] = msgspec.structs.replace(vote, rank_rg=rank)
    out = []
    for v in found.values():
        if _container(v) and (named is None or not named(v.qualname)):
            continue
        score = fusion.fn_w_index / (fusion.k + v.rank_index) if v.rank_index else 0.0
        score += fusion.fn_w_rg / (fusion.k + v.rank_rg) if v.rank_rg else 0.0
        f = file_ranks.get(v.file)
        score += fusion.w_unit_file / (fusion.k + f) if f else 0.0
        is_test = path_role(v.file) == "test" or _in_test_module(v)
        if test_factor != 1.0 and is_test:  # 1.0: tests not demoted (focus tests, or Python)
            score *= test_factor
        out.append(msgspec.structs.replace(v, fused=round(score, 6)))
    return sorted(out, key=lambda v: (-v.fused, v.file, v.qualname))


def _in_test_module(v: UnitVote) -> bool:
    """A Rust unit inside a ``mod tests`` (or ``mod test``) of a source file: test code, as a
    file under ``tests/`` is. cargo-generate's ``src/lib.rs`` filled 4 of the first 5 Relevant
    Functions with ``tests::auto_locate_template_*``. Demoting them found more gold functions
    in the first five and lost two Answers where a fix's own tests were gold (``python -m
    bench.studies.index_fusion``; ``bench/results/index-decisions.md``)."""
    scopes = v.qualname.split("::")[:-1]
    return is_rust(v.file) and ("tests" in scopes or "test" in scopes)


def with_namesakes(votes: list[UnitVote]) -> list[tuple[UnitVote, list[UnitVote]]]:
    """Each unit with the later units of its file that share its last name, which leave the
    list: the methods of one trait implemented by many types of a file (clap's
    ``value_parser.rs`` has 12 ``possible_values``), or one method overridden in sibling
    classes, read as one place, not eight lines of a top 10. Measured by ``python -m
    bench.studies.index_fusion`` on saved signals: a little better for Rust, one issue
    either way for Python (``bench/results/index-decisions.md``)."""
    out: list[tuple[UnitVote, list[UnitVote]]] = []
    first: dict[tuple[str, str], list[UnitVote]] = {}
    for v in votes:
        key = (v.file, last_name(v.qualname))
        if key in first:
            first[key].append(v)
        else:
            first[key] = []
            out.append((v, first[key]))
    return out


RUST_TYPE_KINDS = frozenset({"struct", "enum", "trait", "impl", "mod"})


def _container(v: UnitVote) -> bool:
    """A unit that holds functions rather than being one.

    Rust: a type, an impl block or a module, by its index kind, or for an rg scope by Rust's
    naming (types are UpperCamelCase, functions snake_case, as rustc's lints ask). A type's
    line in a finding (a field, a derive) pushed the functions out of Relevant Functions (no
    gold function of the Rust set is a type; ``bench/results/index-decisions.md``).

    Python: a class the index found (its units' own text is what its methods leave: the
    header, the docstring, class attributes; its names field holds every method's name, so a
    question naming a method ranked its class first). Leaving classes out (and a
    finding in a class body, outside its methods, counted as its class by PEP 8's naming,
    CapWords: ``OrderDiscount.Meta``) put more of the gold functions first and lowered none
    of the sets (``python -m bench.studies.index_fusion``;
    ``bench/results/index-decisions.md``). A private class's leading underscores are not its
    first letter (pyro's ``_Subsample``).
    """
    if is_python_module(v.file):
        return (
            v.kind == "class" if v.kind else v.qualname.rsplit(".", 1)[-1].lstrip("_")[:1].isupper()
        )
    if not is_rust(v.file):
        return False
    if v.kind:
        return v.kind in RUST_TYPE_KINDS
    return v.qualname.rsplit("::", 1)[-1][:1].isupper()
