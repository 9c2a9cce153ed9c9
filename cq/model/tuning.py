"""Every tuned number of cq in one typed table, each with a line saying where it came from.

``Tuning`` groups them by the stage that uses them: ``classify`` (the confidence each tier
gives), ``rank`` (``RankWeights``, in ``ranking.py``), ``enrich``, ``rewrite``, ``parse``
(size caps that shape parsed and cached records), ``scale`` (how a big search is streamed),
``report`` (section sizes) and ``index`` (``IndexTuning``, in ``index_tuning.py``: the
repository index's query, fusion and build). A profile TOML file overrides any of them with
a table of the group's name, e.g. ``[classify] heuristic_reference = 0.3`` or
``[rank.category] import = 0.9``; missing keys keep the defaults below (a nested table,
``[index.python]``, keeps the defaults of the keys it does not name). ``provenance(group)``
lists each field's note.

The notes are honest about their evidence: "measured" cites the bench and the figure the
value was chosen on; "hand-set" says no bench varied it (the bench that guards the
behaviour around it is named where there is one).
"""

from __future__ import annotations

import typing
from typing import Annotated

import msgspec

from cq.model.embed_tuning import EmbedTuning
from cq.model.index_tuning import IndexTuning
from cq.model.ranking import RankWeights


def _why(note: str) -> msgspec.Meta:
    return msgspec.Meta(description=note)


_ACCURACY = "bench/classify_accuracy.py checks the categories, not this value"


class ClassifyTuning(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The confidence of each way a hit gets its category (tier 3 records, tier 2 the syntax
    node, tier 1 the line heuristic). Ranking multiplies by it."""

    records_token: Annotated[float, _why(f"hand-set: the hit is a role token; {_ACCURACY}")] = 0.95
    records_dotted: Annotated[
        float, _why(f"hand-set: a dotted name ending at a role token; {_ACCURACY}")
    ] = 0.9
    records_non_code: Annotated[
        float, _why(f"hand-set: inside a comment, string or docstring; {_ACCURACY}")
    ] = 0.95
    records_non_code_spanning: Annotated[
        float, _why("hand-set: starts in a comment or string and runs past its end")
    ] = 0.7
    records_region_identifier: Annotated[
        float, _why(f"hand-set: an identifier in an import or annotation; {_ACCURACY}")
    ] = 0.9
    records_region_text: Annotated[
        float, _why("hand-set: other text in an import or annotation region")
    ] = 0.75
    records_reference: Annotated[
        float, _why(f"hand-set: an identifier no record gives a role; {_ACCURACY}")
    ] = 0.85
    records_token_prefix: Annotated[
        float, _why("hand-set: a literal that starts with a role token (foo( )")
    ] = 0.75
    node_base: Annotated[float, _why("hand-set: the seed's node tier (004), one hop: 0.8")] = 0.8
    node_decay: Annotated[float, _why("hand-set: per parent hop (the seed used 0.9)")] = 0.95
    node_max_hops: Annotated[int, _why("hand-set: the seed walked 5 parents; 6 here")] = 6
    node_none: Annotated[float, _why("hand-set: no construct within the hops: text_match")] = 0.5
    heuristic_certain: Annotated[
        float, _why("hand-set: a comment or string where a line lexer is exact (seed: 0.95)")
    ] = 0.95
    heuristic_comment: Annotated[float, _why("hand-set: a comment, lexer not exact")] = 0.6
    heuristic_string: Annotated[float, _why("hand-set: a string, lexer not exact")] = 0.55
    heuristic_unsure_string: Annotated[
        float, _why("hand-set: an f-string hole or a line-opening string: the parse decides")
    ] = 0.55
    heuristic_definition: Annotated[float, _why("hand-set: def/class/fn before the hit")] = 0.7
    heuristic_import: Annotated[float, _why("hand-set: the line is an import or use")] = 0.7
    heuristic_call: Annotated[float, _why("hand-set: ( or ! after the hit (seed: 0.7)")] = 0.6
    heuristic_assignment: Annotated[float, _why("hand-set: = after the hit")] = 0.55
    heuristic_reference: Annotated[float, _why("hand-set: anything else on the line")] = 0.4
    clipped_line: Annotated[
        float, _why("hand-set: a line over 1,000 characters, its columns do not line up")
    ] = 0.3
    empty_match: Annotated[float, _why("hand-set: an empty regex match is a position")] = 0.5


class EnrichTuning(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Agreement's effect on confidence, enrichment's budgets and size limits."""

    agreement_bonus: Annotated[
        float,
        _why("hand-set: three parses agree, +0.05 (bench/studies/enrich_agreement.py counts them)"),
    ] = 0.05
    conflict_factor: Annotated[
        float,
        _why("hand-set: a parse misread the hit (bench/studies/enrich_agreement.py lists them)"),
    ] = 0.8
    budget_ms: Annotated[
        float | None,
        _why("hand-set: none, a wall-time deadline is the user's (CQ_ENRICH_BUDGET_MS)"),
    ] = None
    max_hits: Annotated[
        int,
        _why(
            "measured: bench/enrich_cost.py -q get --hits 30 100 200 500 (stdlib, cold, load ~12):"
            " 200 hits 1.5 CPU-s, 500 hits 3.8 CPU-s; a --limit 0 list needs no more detail"
        ),
    ] = 200
    libcst_hits: Annotated[
        int,
        _why("hand-set: more than the default --limit 30, a count so the clock decides nothing"),
    ] = 40
    cold_libcst_hits: Annotated[
        int,
        _why(
            "measured: bench/cold_questions.py, a first question on its 16.5 MB tree (index "
            "building behind it): LibCST's import and metadata 2.1 s of 5.7 s; the first "
            "answer leaves LibCST's resolution to the next questions"
        ),
    ] = 0
    max_payload_bytes: Annotated[
        int, _why("hand-set: one payload's JSON; bench/studies/enrich_cost.py reports the sizes")
    ] = 4096
    max_deep_bytes: Annotated[
        int,
        _why("measured: a hit in a 5 MB file cost 2.7 s compile + 1.8 s parse (cq search over it)"),
    ] = 1024 * 1024
    max_skeleton_bytes: Annotated[
        int, _why("measured: LibCST ~1 ms per skeleton line (bench/studies/enrich_cost.py)")
    ] = 128 * 1024
    symtable_min_confidence: Annotated[
        float, _why("hand-set: the seed's symtable threshold (004: >= 0.70)")
    ] = 0.7
    max_symtable_bytes: Annotated[
        int, _why("measured: symtable compile ~0.5 s per MiB (cq search over a 5 MB file)")
    ] = 1024 * 1024
    helper_min_bytes: Annotated[
        int,
        _why(
            "measured: bench/studies/enrich_helper.py (load 9-15): a forked helper"
            " (cq/forked.py) costs 20-30 ms of fork and copied pages; 'sched' (3 shown files,"
            " 123 KB) took 0.48-0.52 CPU-s of this process alone, 0.20-0.22 with the helper;"
            " from twice the size whose half pays for the fork"
        ),
    ] = 128 * 1024
    standby_wait_ms: Annotated[
        int,
        _why(
            "hand-set: the longest the enrichment waits for a standby still importing (while it"
            " gets a core: cq.prefork.Standby.wait_ready) before it computes the hits itself:"
            " twice the standby's whole import on one core (0.2 s, python -X importtime of"
            " what cq/enrich/standby.py's ready imports)"
        ),
    ] = 400


class RewriteTuning(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Caps and pattern weights of the rewriters (``bench/localization.py`` measures the
    rewriter as a whole over ``../shared/eval``; the per-field notes say how each was set)."""

    max_identifier_patterns: Annotated[
        int, _why("hand-set: identifiers searched per rewrite, model's and text's together")
    ] = 24
    max_literal_patterns: Annotated[int, _why("hand-set: fixed strings searched per rewrite")] = 4
    llm_identifiers: Annotated[
        int, _why("hand-set: names asked of the model (prompt and JSON schema say it)")
    ] = 12
    llm_literals: Annotated[int, _why("hand-set: strings asked of the model")] = 4
    max_pattern_length: Annotated[int, _why("hand-set: longest name or string kept")] = 80
    llm_vocabulary: Annotated[int, _why("hand-set: defined names in the prompt")] = 300
    llm_query_chars: Annotated[int, _why("hand-set: query text sent to the model")] = 6000
    llm_defined: Annotated[float, _why("hand-set: a model name the repository defines")] = 1.0
    llm_undefined: Annotated[float, _why("hand-set: a model name nothing defines")] = 0.6
    llm_rank_decay: Annotated[
        float, _why("hand-set: per place down the model's list, its first names count most")
    ] = 0.04
    llm_literal: Annotated[float, _why("hand-set: a string the model suggests")] = 0.7
    llm_keep_offline: Annotated[
        float, _why("hand-set: offline patterns this strong are searched beside the model's")
    ] = 0.9
    subject: Annotated[float, _why("hand-set: the follow-up's subject ('it')")] = 1.0
    frame_innermost: Annotated[float, _why("hand-set: innermost traceback frame's function")] = 1.2
    frame_near: Annotated[float, _why("hand-set: the next two frames' functions")] = 1.0
    frame_far: Annotated[float, _why("hand-set: frames further out")] = 0.7
    prose_name: Annotated[
        float, _why("hand-set: a name the reporter writes in prose outweighs pasted code")
    ] = 1.2
    code_name: Annotated[float, _why("hand-set: a name in pasted code")] = 1.0
    plain_part: Annotated[float, _why("hand-set: a defined part that reads like a word")] = 0.6
    undefined_part: Annotated[
        float, _why("hand-set: a code-like part nothing defines (keyword arguments, ...)")
    ] = 0.4
    mapped_floor: Annotated[
        float, _why("hand-set: a word-mapped guess weighs 0.25..0.70, below named code")
    ] = 0.25
    mapped_span: Annotated[float, _why("hand-set: see mapped_floor")] = 0.45
    message: Annotated[float, _why("hand-set: an error message quoted in the text")] = 0.5
    max_messages: Annotated[int, _why("hand-set: quoted messages searched")] = 3
    max_mapped: Annotated[int, _why("hand-set: word-mapped names per question")] = 8
    synonym: Annotated[float, _why("hand-set: a synonym's match counts half")] = 0.5
    generic_second_word: Annotated[
        float,
        _why(
            "measured: bench/localization.py on swebench_lite_dev_tuning (22), file Acc@1 10 -> 11"
        ),
    ] = 1 / 3
    tests_only: Annotated[
        float, _why("hand-set: a name defined only in tests, for a question about code")
    ] = 0.3
    unnamed_module: Annotated[
        float,
        _why(
            "measured: other modules' names count half in a short question "
            "(bench/localization.py, lite 22)"
        ),
    ] = 0.5
    class_part: Annotated[float, _why("hand-set: the class of a dotted method name")] = 0.8
    short_question: Annotated[
        int, _why("hand-set: characters; longer text is a pasted report, not a question")
    ] = 200
    frame_line: Annotated[float, _why("hand-set: innermost frame's source line as a string")] = 0.8
    frame_line_next: Annotated[float, _why("hand-set: the next frame's source line")] = 0.6
    hint_frame: Annotated[float, _why("hand-set: a file in the innermost traceback frame")] = 1.0
    hint_frame_next: Annotated[float, _why("hand-set: the next frame's file")] = 0.8
    hint_frame_far: Annotated[float, _why("hand-set: files of frames further out")] = 0.6
    hint_path: Annotated[float, _why("hand-set: a path printed or imported in the text")] = 0.8
    hint_stem: Annotated[float, _why("hand-set: a file named after a mentioned name")] = 0.5
    hint_module: Annotated[
        float,
        _why(
            "measured: a prose word naming a module: bench/localization.py, lite 22, Acc@1 10 -> 11"
        ),
    ] = 1.0
    hint_package: Annotated[
        float,
        _why("measured: a prose word naming a small package (bench/localization.py, lite 22)"),
    ] = 0.3
    max_package_files: Annotated[int, _why("hand-set: a package hint spreads over at most")] = 30
    question_code_words: Annotated[
        int,
        _why(
            "hand-set: a code-like word among fewer words is a search as typed (rewrite_heuristic)"
        ),
    ] = 6
    question_content_words: Annotated[
        int, _why("hand-set: fewer content words, no question word: searched as typed")
    ] = 3
    question_min_words: Annotated[
        int, _why("hand-set: words before the stop-word share below can say 'sentence'")
    ] = 4
    question_stop_share: Annotated[
        float, _why("hand-set: more stop words than this share reads as a sentence")
    ] = 0.4


class ParseTuning(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Size caps that shape parsed and cached records (they are part of the cache key)."""

    max_parse_bytes: Annotated[
        int,
        _why("measured: a hit in a 5 MB file cost 4.5 s to parse and compile (cq search over it)"),
    ] = 4 * 1024 * 1024
    max_slice_hits: Annotated[int, _why("hand-set: a file with more hits is parsed whole")] = 256
    max_sliced_fraction: Annotated[
        float,
        _why(
            "measured: bench/audit_scale.py cold CPU 10.5 -> 9.3 s with 1.0 (0.5 before): its"
            " 598 files over half parse sliced in 1.51 CPU-s, whole in 2.12, and no tenth from"
            " 0.5 to 1.0 is slower sliced"
        ),
    ] = 1.0
    macro_depth: Annotated[int, _why("hand-set: Rust macros inside macros, reparsed")] = 4


class ScaleTuning(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How a large search streams: what the main process holds, when a pool pays."""

    pool_min_bytes: Annotated[
        int, _why("measured: bench/studies/pool_breakeven.py, ~2 MB parse a second on one core")
    ] = 3 * 1024 * 1024
    pool_projected_bytes: Annotated[
        int,
        _why(
            "measured: bench/audit_scale.py's audit projects 29.8 MB of parse work from its"
            " first 4 MB chunk (pool started at 0.82 main CPU-s, not 1.19, after 4.2 MB of"
            " files planned here, not 12.7); the stdlib's cold '__init__' projected 3.06 MB,"
            " parses less, and spent 0.6 CPU-s more with a pool: twice pool_min_bytes"
        ),
    ] = 6 * 1024 * 1024
    max_workers: Annotated[int, _why("hand-set: pool workers at most (and at most the CPUs)")] = 4
    batch_bytes: Annotated[
        int, _why("hand-set: ~0.3 s of parsing per batch; bench/audit_scale.py")
    ] = 1024 * 1024
    max_in_flight_bytes: Annotated[
        int, _why("measured: bench/audit_scale.py, audit peak RSS 201 -> 163 MB with keep 32 MiB")
    ] = 16 * 1024 * 1024
    chunk_bytes: Annotated[
        int, _why("measured: bench/audit_scale.py; one cache query per chunk")
    ] = 4 * 1024 * 1024
    plan_sample_bytes: Annotated[
        int,
        _why(
            "measured: bench/first_search.py, the stdlib's cold '__init__' (23 MB of files):"
            " the first 4 MiB chunk planned in the main process (to weigh its parse work"
            " before the pool's start) cost 20-30 ms of wall time against 1 MiB, 256 KiB no"
            " faster than 1 MiB; the rest is planned where it is analysed"
        ),
    ] = 1024 * 1024
    helper_min_bytes: Annotated[
        int,
        _why(
            "measured: bench/studies/enrich_helper.py's fork (20-30 ms with its copied pages)"
            " against parsing at ~2 MB/s on one core (pool_min_bytes): a search that stays"
            " in-process takes turns with a forked helper from 256 KiB of parse work"
        ),
    ] = 256 * 1024
    corpus_keep_bytes: Annotated[
        int,
        _why("measured: golden '__init__' reads 23 MB (kept whole); audit 167 MB: 163 MB peak"),
    ] = 32 * 1024 * 1024


class ReportTuning(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How much of each section a report shows (bench/studies/report_size.py: lines per report)."""

    top_groups: Annotated[int, _why("hand-set: scope groups in Top Contexts")] = 5
    group_members: Annotated[int, _why("hand-set: findings listed per group")] = 4
    hot_files: Annotated[int, _why("hand-set: files in Hot Files")] = 5
    relevant_files: Annotated[
        int, _why("hand-set: a question is answered by files: the first ten in rank order")
    ] = 10
    max_follow_ups: Annotated[int, _why("hand-set: suggested next searches")] = 4
    long_line: Annotated[int, _why("hand-set: characters; a longer line is shown as a window")] = (
        1000
    )
    window: Annotated[int, _why("hand-set: characters of that window")] = 160
    suggestions: Annotated[
        int, _why("hand-set: did-you-mean names listed when a name matched nothing")
    ] = 5
    suggest_chars_per_edit: Annotated[
        int,
        _why(
            "hand-set: a name of n characters (snake/camel-blind) may be n // 4 edits away "
            "(at least 1 from 3 characters on): getLoger -> getLogger on the stdlib"
        ),
    ] = 4
    suggest_max_edits: Annotated[
        int, _why("hand-set: more edits than this is another name, however long")
    ] = 3


class Tuning(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """All of them; a profile's tables override single fields."""

    classify: ClassifyTuning = msgspec.field(default_factory=ClassifyTuning)
    rank: RankWeights = msgspec.field(default_factory=RankWeights)
    enrich: EnrichTuning = msgspec.field(default_factory=EnrichTuning)
    rewrite: RewriteTuning = msgspec.field(default_factory=RewriteTuning)
    parse: ParseTuning = msgspec.field(default_factory=ParseTuning)
    scale: ScaleTuning = msgspec.field(default_factory=ScaleTuning)
    report: ReportTuning = msgspec.field(default_factory=ReportTuning)
    index: IndexTuning = msgspec.field(default_factory=IndexTuning)
    embed: EmbedTuning = msgspec.field(default_factory=EmbedTuning)


def provenance(group: type[msgspec.Struct]) -> dict[str, str]:
    """Each field of a tuning group and the note saying where its value came from."""
    hints = typing.get_type_hints(group, include_extras=True)
    notes: dict[str, str] = {}
    for name in group.__struct_fields__:
        metas = getattr(hints[name], "__metadata__", ())
        notes[name] = next((m.description for m in metas if isinstance(m, msgspec.Meta)), "")
    return notes
