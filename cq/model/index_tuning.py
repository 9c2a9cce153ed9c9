"""The repository index's tuned numbers: the fusion, the query, the build (``Tuning.index``).

Part of ``tuning.Tuning`` (its ``index`` group), read by ``cq/index`` and by the tuning bench
``bench/studies/index_fusion.py``, so the bench scores exactly what a search does. A profile
overrides single fields, e.g. ``[index] title_weight = 1.5`` or ``[index.python] w_named =
2.0`` (a nested table keeps the defaults of the fields it does not name).

The fusion's figures are file Acc@5 of ``bench/studies/index_fusion.py`` (see
``bench/results/index-python.md`` and ``bench/results/rust-accuracy.md`` for the tables).
"""

from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec


def _why(note: str) -> msgspec.Meta:
    return msgspec.Meta(description=note)


_GRID = "bench/studies/index_fusion.py --grid"


class Fusion(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Weighted reciprocal-rank fusion of rg's file order with the index's (``cq/index/fuse.py``).

    Measured with ``bench/studies/index_fusion.py`` on lite-dev 22, python_tuning sample 100 and
    rust_tuning sample 60, full texts and titles; file Acc@5 full lite/py/rs, titles lite/py:

    - rg alone (cq before the index): 86.4/55.0/15.0, titles 63.6/40.0
    - these defaults (plain RRF, k 5, weights 1, best unit 0.5, roles): 95.5/58.0/31.7,
      titles 68.2/46.0
    - the grid's best mean full-text Acc@5 (index weight 1.5): 95.5/55.0/36.7, titles
      68.2/45.0: the same within an issue or two per set, so the untuned weights stay; with
      equal weights a file both orders rank first and second goes to rg's first, which keeps a
      module the question names ahead of one that merely says the words more often
      (tests/test_rewrite_offline.py).
    """

    k: Annotated[
        float, _why(f"measured: {_GRID} k 3/5/10: small k trusts the first ranks most")
    ] = 5.0
    w_rg: Annotated[float, _why("hand-set: rg's order, the reference weight")] = 1.0
    w_index: Annotated[
        float, _why(f"measured: {_GRID} 0.75/1/1.5: 1.5 no better by more than an issue a set")
    ] = 1.0
    k_units: Annotated[
        float, _why("hand-set: as k, inside the index (file documents vs best units)")
    ] = 5.0
    w_units: Annotated[
        float, _why(f"measured: {_GRID} 0.5/1/2: a file's best unit counts half its file")
    ] = 0.5
    w_unit_file: Annotated[
        float, _why("hand-set: Relevant Functions, the weight of the unit's file's fused rank")
    ] = 1.0
    fn_w_index: Annotated[
        float, _why("hand-set: Relevant Functions, the weight of a unit's rank in the index")
    ] = 1.0
    fn_w_rg: Annotated[
        float, _why("hand-set: Relevant Functions, the weight of rg's scope's rank")
    ] = 1.0
    roles: Annotated[
        bool,
        _why(
            "measured: tests demoted by rank.role.test, rust_tuning 123 Acc@5 36.6 -> 37.4, "
            "python_tuning 313 57.8 -> 59.1; docs and lib too cost python_tuning Acc@10 2.6"
        ),
    ] = True
    w_named: Annotated[
        float, _why("hand-set: files the text names (traceback, path, module, Rust's locations)")
    ] = 0.0
    w_defined: Annotated[
        float, _why("hand-set: files defining a name the text writes as code; Python only")
    ] = 0.0
    size_exponent: Annotated[
        float, _why("measured: RUST_FUSION's note; the file prior grows as bytes to this power")
    ] = 0.0
    unit_votes: Annotated[
        float, _why("measured: RUST_FUSION's note; the file prior's gain per unit among hits")
    ] = 0.0
    unit_votes_max: Annotated[
        int, _why("measured: RUST_FUSION's note; units the file prior counts (5/10 tried)")
    ] = 10
    test_functions: Annotated[
        bool,
        _why(
            "measured: Relevant Functions demote a test file's units by rank.role.test unless "
            "the focus is tests; rust_tuning 123 fn Hit@5 texts 33.1 -> 35.6, titles 27.1 -> "
            "30.5 (python_tuning 313 52.9 -> 53.2: not applied there, left to its tuning)"
        ),
    ] = False


# Chosen by leave-one-repository-out over python_tuning 313 full texts, python_tuning
# sample-100 titles, lite-dev 22 texts and titles (14 repositories; bench/studies/index_fusion.py
# --grid --loro): 12 of the 14 folds chose these weights; file Acc@5 (mean over the four sets
# 67.1 -> 68.7) python_tuning 57.8 -> 62.0, titles 47.0 -> 49.0, lite 95.5 and 68.2 kept.
# w_named 1.0-2.0 and w_defined 0.25-0.5 score within one issue of it.
# Relevant Functions: the unit's file's fused rank weighs 3, its rank among the index's units
# 2 and rg's scope's 0.5 (now 1 and 0.25, below), so the list follows the file order (its best
# units first). Chosen by
# leave-one-repository-out on function Hit@5 (bench/studies/index_fusion.py --grid functions, grid
# fn_w_index 0.5-3, fn_w_rg 0.25-1, w_unit_file 1-6; 12 of 14 folds) over python_tuning 313
# texts and titles and lite-dev 22 texts and titles: 55.9/34.6/75.0/40.0 -> 59.0/40.3/70.0/
# 45.0 (leave-one-out 59.0/39.7/65.0/40.0); 290 -> 316 of the 630 issues with a gold function.
# Re-chosen the same way on signals gathered again after the index's query words changed:
# 12 of 14 folds chose fn_w_index 1 and fn_w_rg 0.25 (were 2 and 0.5); held out
# python_tuning texts/titles 61.0/45.4 and lite-dev 65.0/45.0, against 60.3/41.7 and 70.0/45.0
# with the old weights (in-sample 61.4/45.8/65.0/50.0).
PYTHON_FUSION = Fusion(
    w_units=0.0, w_named=1.0, w_defined=0.5, w_unit_file=3.0, fn_w_index=1.0, fn_w_rg=0.25
)
# Rust questions (every question whose files are not mostly Python): the files the text names
# (rustc's and a panic's locations, paths in the prose, GitHub file links) as a third list at
# Python's measured weight (the same evidence; too few Rust texts name a file of their tree to
# fit one: on rust_tuning 123, 9 texts name 12 files of their tree, 8 of them gold; weight
# 0.5/1/2 scored Acc@5 37.4/38.2/38.2). rust_tuning 123 fused file Acc@5 37.4 -> 38.2.
#
# The file prior (``fuse.file_prior``): a file's fused score times (bytes / 10 kB) ** 0.2 and
# 1 + 0.05 per unit among the index's 50 best (at most 10). Bigger files and files with several
# matching units are fixed more often (bench/studies/rust_signals.py: of the fused first 10 files,
# gold 12.9% under 10 kB, 27.7% from 50 kB; 30.4% with 3+ units, 8.1% with none; titles
# alike). bench/studies/index_fusion.py on saved signals, grid size_exponent 0/0.1/0.2/0.3 x
# unit_votes 0/0.025/0.05/0.1 x unit_votes_max 5/10, leave-one-repository-out on mean Acc@5
# of texts and titles: 11 of 13 folds chose these, held-out Acc@5 texts 38.2 (39.0 without),
# titles 42.3 (40.7). rust_tuning 123 fused Acc@1/3/5/10 texts 9.8/24.4/39.0/56.9 ->
# 11.4/27.6/39.8/58.5, titles 13.0/28.5/40.7/51.2 -> 14.6/29.3/43.1/52.8; fn Hit@5 unchanged
# (35.6, 28.8). Small (1-3 issues a figure) but no figure falls. Python keeps no prior.
#
# Its Relevant Functions follow the file order, as Python's do: the unit's file's fused rank
# weighs 3, its rank among the index's units 0.5 and rg's scope's 0.25 (they were 1/1/1,
# hand-set). Leave-one-repository-out on function Hit@5 over rust_tuning 123 texts and titles
# (fn_w_index 0.5-3 x fn_w_rg 0.25-1 x w_unit_file 0.5-6, saved signals; 11 of 13
# folds chose it): held out 33.9 -> 33.9 texts, 28.0 -> 32.2 titles.
RUST_FUSION = Fusion(
    w_named=1.0,
    test_functions=True,
    size_exponent=0.2,
    unit_votes=0.05,
    w_unit_file=3.0,
    fn_w_index=0.5,
    fn_w_rg=0.25,
)
# A one-line Rust question (or an issue's title alone) has few words for rg's patterns, most
# of them guessed from the prose: the index's order weighs twice rg's. rust_tuning 123
# titles, fused file Acc@1/3/5/10 13.8/26.0/37.4/49.6 -> 13.0/28.5/40.7/51.2 (index weight
# 1.25/1.5 gave Acc@5 39.0/39.8); leave-one-repository-out over w_index 1-3 x w_rg 0.5-1: 12
# of 13 folds chose it, held-out Acc@5 39.0 (clap gains 3 issues, async-trait 1,
# async-graphql loses 1; without clap 47.0 -> 48.2). Full texts: every fold kept weight 1.
# Its Relevant Functions keep the index weight they had with it (fn_w_index follows w_index).
RUST_LINE_FUSION = msgspec.structs.replace(RUST_FUSION, w_index=2.0, fn_w_index=1.0)


class FieldBoosts(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """BM25 weight of each text field of a document (0: the field is not searched)."""

    path_words: Annotated[float, _why("hand-set: words of the file's path")] = 0.0
    names: Annotated[float, _why("hand-set: names the file or unit defines")] = 0.0
    sig: Annotated[float, _why("hand-set: a unit's signature")] = 0.0
    doc: Annotated[float, _why("hand-set: docstrings and doc comments, half the body")] = 0.0
    body: Annotated[float, _why("hand-set: the text, the reference weight")] = 0.0

    def table(self) -> dict[str, float]:
        """Field -> boost for tantivy, the searched fields only, in schema order."""
        return {f: w for f in self.__struct_fields__ if (w := getattr(self, f))}


_ASCENT = (
    "measured: python -m bench.studies.function_answer --grid, coordinate ascent on saved "
    "reports (python_tuning sample 100, lite-dev 22; bench/results/function-signals.md)"
)
_LOCALIZATION = "measured: python -m bench.localization (bench/results/function-signals.md)"


class SignalWeights(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How much each of a Relevant Function's signals (``cq/index/function_signals.py``, each
    0-1) adds to its score relative to the best fused unit (``cq/index/functions.py``).

    The first seven were chosen together, by coordinate ascent over the grid of
    ``bench/studies/function_answer.py`` on saved reports of issue texts and titles, and checked
    by leaving one repository out; the rest one at a time by the bench each note names. The
    figures are in ``bench/results/function-signals.md``."""

    # Weights that count against a function (a profile may set them below 0 too).
    signed: ClassVar[frozenset[str]] = frozenset({"test", "constructor", "aside", "variant"})

    frame: Annotated[
        float, _why(f"{_ASCENT}; at the grid's top: few issues name a tree's function in a frame")
    ] = 2.0
    written: Annotated[float, _why(f"{_ASCENT}; the function's name written as code")] = 0.2
    owner: Annotated[float, _why(f"{_ASCENT}; its class's name written as code")] = 0.1
    named: Annotated[
        float,
        _why(
            "measured: the everyday questions' saved reports replayed (bench/data/everyday.jsonl, "
            "concept and title, warm index; bench/results/2026-11-29-everyday-answer3/): 0.5 and "
            "1.0 move the one question whose name it is to the Answer, 0.2 to the first five; "
            "a function named by exactly the question's words"
        ),
    ] = 0.5
    inside: Annotated[float, _why(f"{_ASCENT}; rg's hits inside it")] = 0.2
    file: Annotated[float, _why(f"{_ASCENT}; its file's place in the search's file order")] = 0.1
    covers: Annotated[float, _why(f"{_ASCENT}; its share of the question's words")] = 0.8
    head: Annotated[
        float,
        _why(
            "measured: the everyday set's concept and title pools replayed "
            "(bench/results/2026-11-29-answer5/replay_words.py, grid 0-1.2 with covers 0.4-1.6): "
            "0.4 with covers kept at 0.8, chosen by 9 of 11 folds leaving a repository out; a "
            "how-question's share its names, signature and docstring say (titles: 0, "
            "functions.measured)"
        ),
    ] = 0.4
    test: Annotated[float, _why(f"{_ASCENT}; test code, unless the question is about tests")] = -0.3
    size: Annotated[
        float,
        _why(
            "measured: python -m bench.studies.function_answer --probe, one-line questions, "
            "the list after the Answer (function_signals.sizes)"
        ),
    ] = 1.0
    titled: Annotated[
        float, _why(f"{_LOCALIZATION}; a class a title names, the list after the Answer")
    ] = 0.3
    message: Annotated[
        float,
        _why(f"hand-set, then {_LOCALIZATION.removeprefix('measured: ')}; a quoted message"),
    ] = 1.0
    constructor: Annotated[
        float,
        _why(
            "measured: python -m bench.studies.question_answers on the blind questions' reports; "
            "a how-question's constructor, the Answer only"
        ),
    ] = -1.0
    aside: Annotated[
        float,
        _why(
            "hand-set to constructor's weight, not fitted: a how-question's function in a "
            "contrib, nursery or examples directory (function_signals.aside), the Answer only; "
            "measured: bench/results/2026-11-30-answer9/ (replay.py on the everyday set's "
            "concept and title reports)"
        ),
    ] = -1.0
    naming: Annotated[
        float,
        _why(
            "measured: the everyday set's concept and title reports re-weighed "
            "(bench/results/2026-11-30-answer9/loo_naming.py) and run at 1.5 and 2.0: 1.5, "
            "the folds leaving a repository out held to the runs (2.0 loses gluonts-10 by the "
            "override rule the re-weighing cannot see); a one-line how-question's share its "
            "function's own name says, the Answer only"
        ),
    ] = 1.5
    variant: Annotated[
        float,
        _why(
            "hand-set to constructor's weight, not fitted: a how-question's method of a class "
            "named as another candidate's class with words the question does not say "
            "(function_signals.variants), the Answer only; measured: the everyday set's "
            "concept and title reports replayed (bench/results/2026-11-30-answer11/): the "
            "same Answers at every weight from -0.25 to -2 (loo_weights.py)"
        ),
    ] = -1.0


_MENTIONS = "bench/studies/index_fusion.py weighs the whole list (index.python.w_named)"


class IndexTuning(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What the index asks, how its answer is fused into a search, and when a search builds it."""

    fusion: Annotated[
        Fusion,
        _why(
            "measured: bench/studies/index_fusion.py, the table in Fusion's docstring; Rust's "
            "named files and test functions: RUST_FUSION's note (rust_tuning 123 Acc@5 37.4 -> "
            "38.2); its file prior: the note above it (texts 39.0 -> 39.8, titles 40.7 -> 43.1)"
        ),
    ] = msgspec.field(default_factory=lambda: RUST_FUSION)
    one_line: Annotated[
        Fusion,
        _why(
            "measured: leave-one-repository-out, 12 of 13 folds; a one-line Rust question, "
            "rust_tuning 123 titles Acc@5 37.4 -> 40.7 (held-out 39.0)"
        ),
    ] = msgspec.field(default_factory=lambda: RUST_LINE_FUSION)
    python: Annotated[
        Fusion,
        _why(
            "measured: leave-one-repository-out, 12 of 14 folds; python_tuning 313 Acc@5 "
            "57.8 -> 62.0, titles 47.0 -> 49.0, lite-dev 95.5 and 68.2 kept; Relevant "
            "Functions (fn_w_*, w_unit_file) by --grid functions, 12 of 14 folds, fn Hit@5 "
            "of 630 issues 290 -> 316"
        ),
    ] = msgspec.field(default_factory=lambda: PYTHON_FUSION)
    title_weight: Annotated[
        float,
        _why(
            "measured: --requery, python_tuning 313 fused Acc@5/1 61.3/33.5 -> 62.3/34.2, "
            "lite-dev 95.5/68.2 both; rust_tuning 123 Acc@5/10 42.3/57.7 -> 42.3/61.8 "
            "(cq/index/query.py); an issue title's words"
        ),
    ] = 2.0
    base_form_weight: Annotated[
        float,
        _why(
            "measured: --requery of titles (one-line), base forms at 0.25/0.5/1.0: file Acc@5 "
            "python_tuning 53.7 -> 54.0 each, rust 43.1 -> 43.1/43.9/43.9, lite-dev 81.8 kept; "
            "Acc@10 python 61.7 -> 61.0/60.4/60.4, rust 55.3 -> 57.7, lite 90.9 -> 90.9/86.4/"
            "86.4: 1-4 issues either way; Acc@5 decides. Texts never ask them. A word's "
            "abbreviations (evaluated -> eval) are asked at this share too"
        ),
    ] = 0.5
    synonym_weight: Annotated[
        float,
        _why(
            "measured: the everyday set's concept and title questions (bench/data/everyday.jsonl, "
            "warm, bench/results/2026-11-30-answer7/): a one-line question's words' "
            "synonyms (cq.rewrite.THESAURUS) asked at this share of the word's weight"
        ),
    ] = 0.5
    max_words: Annotated[
        int, _why("hand-set: distinct query words kept, most frequent first (tracebacks repeat)")
    ] = 256
    file_boosts: Annotated[
        FieldBoosts,
        _why(
            "hand-set, then measured: bench/studies/index_fusion.py --requery, path words 1 "
            "or names 2 moved fused Acc@5 by at most an issue a set (python_tuning 313 titles "
            "names 2: -4 issues); path words count double"
        ),
    ] = msgspec.field(
        default_factory=lambda: FieldBoosts(path_words=2.0, names=1.0, doc=0.5, body=1.0)
    )
    unit_boosts: Annotated[
        FieldBoosts,
        _why(
            "hand-set, then measured: bench/studies/index_fusion.py --requery, names 1 or 3, doc "
            "1, body 2: fused file Acc@5 within 1-3 issues a set, fn Hit@5 of python_tuning 313 "
            "texts 59.7 -> 57.3-58.3 (lite-dev 22 texts names 1: 70.0 -> 75.0); names count double"
        ),
    ] = msgspec.field(default_factory=lambda: FieldBoosts(names=2.0, sig=1.0, doc=0.5, body=1.0))
    files_asked: Annotated[int, _why("hand-set: file documents retrieved per question")] = 50
    units_asked: Annotated[
        int, _why("hand-set: unit documents outside the tests retrieved per question")
    ] = 50
    units_read_most: Annotated[
        int,
        _why(
            "hand-set: unit documents read at most to find units_asked outside the tests; "
            "the everyday concept questions' gold functions ranked 1-104 among the tree's "
            "units outside the tests, behind up to 236 tests (bench/results/2026-11-29-answer5/)"
        ),
    ] = 400
    max_names: Annotated[
        int, _why("hand-set: names looked up as definitions, first written first")
    ] = 64
    max_definitions: Annotated[int, _why("hand-set: unit documents read for those names")] = 2000
    mention_frame: Annotated[
        float, _why(f"hand-set: a traceback frame's file, where the error was raised; {_MENTIONS}")
    ] = 2.0
    mention_path: Annotated[
        float, _why(f"hand-set: a path or module the text names; {_MENTIONS}")
    ] = 1.0
    mention_name: Annotated[
        float,
        _why(
            "measured: bench/studies/index_fusion.py --requery, a file a Python title names by its "
            "name alone (mentions.py), half a path's weight: python_tuning 313 titles fused "
            "Acc@1/3/5/10 30.7/47.3/52.4/60.4 -> 31.0/47.6/54.0/61.3, texts Acc@5 62.6 kept "
            "(Acc@1 34.5 -> 35.8), lite-dev 22 texts kept, titles Acc@1 45.5 -> 50.0; weight "
            "1 scores the same, 2 (a frame's) texts Acc@1 35.5"
        ),
    ] = 0.5
    stem_max_files: Annotated[
        int,
        _why(
            "measured: --requery, a title word naming at most 1, 2 or 3 files: python_tuning "
            "313 Acc@5 texts 62.6/62.6/62.6, titles 54.0/54.0/54.0 (flat: the most precise kept; "
            "measured with words and pairs, before underscores were ignored)"
        ),
    ] = 1
    stem_min_len: Annotated[
        int,
        _why("measured: --requery, words of 3 letters and more, not 4: titles Acc@5 54.0 vs 53.4"),
    ] = 3
    mention_max_files: Annotated[
        int, _why("hand-set: a mention matching more files than this is too vague to count")
    ] = 3
    per_file: Annotated[
        int, _why("hand-set: findings of a file placed at its fused rank (30 findings: ~10 files)")
    ] = 3
    functions: Annotated[int, _why("hand-set: Relevant Functions listed")] = 10
    signals: Annotated[
        SignalWeights,
        _why(f"{_ASCENT}; each weight's own note says how it was measured"),
    ] = msgspec.field(default_factory=SignalWeights)
    function_pool: Annotated[
        int,
        _why(
            "measured: fused units the question's signals reorder before the first `functions` "
            "are listed (cq/index/functions.py); python_tuning sample 100 (bench.localization "
            "--raw-dir, listing 40): a gold function among the first 10 / 20 / 30 fused texts "
            "69.6 / 79.3 / 89.1%, titles 54.3 / 63.0 / 68.5%"
        ),
    ] = 30
    coverage_units: Annotated[
        int,
        _why(
            "measured: bench/studies/index_fusion.py, Relevant Functions' first 10 / 15 reordered "
            "by the question's words their text holds (cq/index/coverage.py); 10 at weight 2: fn "
            "Hit@1/Hit@5 python_tuning 313 texts 36.6/65.4 -> 38.6/67.5, titles 27.1/50.2 -> "
            "25.8/51.9; rust_tuning 123 texts 15.3/39.8 -> 25.4/44.1, titles 14.4/36.4 -> "
            "20.3/41.5; lite-dev 22 texts 60.0/65.0 -> 70.0/75.0, titles 45.0/55.0 -> 50.0/65.0 "
            "(15: python titles Hit@5 53.9, rust texts 45.8, others lower). The index's own first "
            "10 units join them wherever fused (with_members and the 5-stem minimum in place): "
            "python texts Hit@5 68.5 -> 69.2, titles 26.4/51.9 -> 26.1/53.6, rust texts 44.1 -> "
            "45.8; blind questions Answer 16/16/19 of 48 -> 16/19/19 (3 or 5 of the index's: "
            "python titles Hit@5 51.9/52.2, rust 45.8/46.6)"
        ),
    ] = 10
    coverage_weight: Annotated[
        float,
        _why(
            "measured: as coverage_units; a unit's fused score times 1 + this x its coverage "
            "(0-1); weight 3: python texts 38.3/65.8, rust texts 25.4/44.9, titles 19.5/42.4; "
            "ordering by place instead of score (1 + 2 x coverage over 6 + rank): python "
            "texts 39.7/67.5, titles 26.8/52.2, rust texts 23.7/44.1, lite-dev texts 60.0/65.0"
        ),
    ] = 2.0
    coverage_min_words: Annotated[
        int,
        _why(
            "measured: distinct stems a question must ask before coverage reorders anything; "
            "bench/data/questions.jsonl (17 short questions: 'how are templates rendered?') "
            "Answer 9 -> 11 of 17 at 5 (10 before coverage); the three blind sets of 48 "
            "unchanged (16, 16, 19); titles fn Hit@5 python_tuning 52.5 -> 51.9, Hit@1 and "
            "rust and lite-dev unchanged. Dividing a one-line question's coverage by (unit "
            "size / mean) ** 0.25 instead, against long units holding any words by chance: "
            "blind sets 19, 18, 16 against 16, 16, 19, titles rust Hit@1 20.3 -> 17.8: not kept"
        ),
    ] = 5
    file_coverage_files: Annotated[
        int,
        _why(
            "measured: bench/studies/index_fusion.py, the fused first 10 files reordered by their "
            "best function's coverage of the question (coverage.files_by_coverage), weight "
            "1: file Acc@1/3/5 python_tuning 313 texts 35.5/55.3/63.9 -> 36.1/55.3/63.6, "
            "titles 31.3/48.2/54.3 -> 33.5/48.9/53.7; rust_tuning 123 texts 13.8/33.3/43.9 "
            "-> 16.3/34.1/43.9, titles 18.7/31.7/44.7 -> 21.1/32.5/45.5; lite-dev 22 texts "
            "unchanged, titles 50.0/68.2/81.8 -> 54.5/72.7/86.4; Relevant Functions unchanged "
            "(their file ranks stay the fused ones). The first 5 only (a scratch script, no "
            "file kept in place): Acc@1 +0.6 to +4.5, Acc@5 unchanged by construction"
        ),
    ] = 10
    file_coverage_weight: Annotated[
        float,
        _why(
            "measured: as file_coverage_files; 2: python texts 36.1/55.0/63.6, titles "
            "33.9/49.8/54.0, rust texts 16.3/32.5/43.9, titles 20.3/32.5/44.7; whole files' "
            "words instead of their best function's: Acc@5 within 1-2 issues, rust titles "
            "42.3-43.9; every unit kind (classes, modules) instead of functions: lite-dev "
            "titles Acc@5 77.3, rust texts Acc@1 13.0"
        ),
    ] = 1.0
    index_only_confidence: Annotated[
        float, _why("hand-set: a file only the index found: relevant, not the queried name")
    ] = 0.5
    auto_build_bytes: Annotated[
        int,
        _why(
            "measured: bench/index_speed.py --tree, moto's 22.3 MB builds in ~4 CPU-s; the "
            "stdlib with site-packages (176 MB) waits for `cq index` (CQ_INDEX_AUTO_BYTES)"
        ),
    ] = 128 * 1024 * 1024
    background_build_bytes: Annotated[
        int,
        _why(
            "measured: bench/index_speed.py --tree, moto's 22.3 MB first build ~4 CPU-s "
            "(tokenizing shared by tantivy's threads): a first question waits for its index "
            "up to ~3x that (~12 CPU-s, ~6 s on 2 idle cores); answered without it, the "
            "report says so. A first build over it runs in a process of its own (0: never)"
        ),
    ] = 64 * 1024 * 1024
    question_wait_s: Annotated[
        float,
        _why(
            'measured: a cold `cq search "how are buckets created?"` on moto (22.3 MB, '
            "2 cores, load 5): the first build beside the search took 11.8 s; with the index "
            "waited for only until --timeout (10 s; the build stops at 7) the Answer came "
            "without it, and so did the concept and title questions of 4 other trees of "
            "bench/everyday.py cold runs under load (bench/results/2026-11-29-everyday-"
            "answer3/). A question waits this long for its index (or --timeout, if longer); "
            "a build over background_build_bytes is not waited for at all"
        ),
    ] = 60.0
    build_timeout_share: Annotated[
        float,
        _why(
            "hand-set: the share of a question's wait for its index (question_wait_s or "
            "--timeout) an index build may take before it commits the files indexed so far; "
            "the rest is left for that commit and the search's own stages"
        ),
    ] = 0.7
    lock_wait_s: Annotated[
        float,
        _why(
            "measured: bench/index_speed.py, a first build of its tree ~2.7 CPU-s; a second "
            "search waits this long for the writer, then reads what is committed"
        ),
    ] = 5.0
    writer_heap_bytes: Annotated[
        int, _why("hand-set: tantivy's writer memory; one writer thread (build.py says why)")
    ] = 64 * 1024 * 1024
    too_large_s: Annotated[
        float, _why("hand-set: a tree found too large to build is not listed again this long")
    ] = 600.0
    build_pool_bytes: Annotated[
        int,
        _why(
            "measured: bench/index_speed.py 19 MB tree, `cq index` 2.3-2.5 CPU-s in-process "
            "against 2.6-3.2 with two workers (again with this set to 1: 2.5/2.8 against "
            "3.4/3.4, load 25-30); the pool above the bench tree, below the 64 MB"
        ),
    ] = 32 * 1024 * 1024
    build_batch_bytes: Annotated[
        int, _why("hand-set: source per worker batch of a pooled build, rows come in path order")
    ] = 1024 * 1024
