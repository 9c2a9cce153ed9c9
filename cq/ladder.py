"""The fallback ladder: the rg runs a query gets, from the ``Question`` to the candidates.

The first rung searches the query as typed, in its mode; a phrase (``Question.intent``: a
message, several words searched -F) is searched as text first and, when it is nowhere
verbatim, as its format string (``Question.filled``), never rewritten under -F; a question
(``Question.trigger``) is rewritten first, its guesses searched beside it under the wider
question caps, and the index brought up to date meanwhile; a call typed alone
(``Arg::new()``) is searched as the name it calls as well, whose definition it asks about; a
pasted traceback from outside the tree is searched by its last message, as a phrase. When
nothing matches, the next rung:

1. an identifier whose mode cq detected is searched again as literal text; when that text is
   only inside longer names (``getBucket`` in ``InvalidTargetBucket``) and a defined name is
   near it (``get_bucket``), the name is said to be nowhere, with the names nearest it;
2. still nothing, and a name was typed: the defined names nearest it (a name no file holds
   is said to be nowhere; no rewrite guesses an Answer for it, the index never answers one);
   so is the one name a rewritten question writes when its rewrite matched nothing, and a
   file name (``s3/models.py``) is answered with the tree's files of that name;
3. otherwise, when the request left the rewrite and the mode to cq: a call pasted
   (``Command::new("app")``) is searched as the name it calls, as typed alone it would be;
   then the text rewritten (trigger ``zero_results``), the index started, rg run over the
   rewrite's patterns.

``Ladder.climb`` runs them and returns the candidates with how they were found (a
``Climb``: the patterns, the modes, which rung stopped it) and the index's run, a live
thread the pipeline holds and closes; the pipeline takes them from there and runs every
later stage once.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Literal

import msgspec

from cq.candidates import Candidates, collect_candidates, patterns_for_query
from cq.index import IndexRun
from cq.llm_settings import LlmEnv
from cq.model import (
    Focus,
    LadderSettings,
    Pattern,
    QueryMode,
    Question,
    RawMatch,
    Scope,
    SearchStats,
    Suggestion,
)
from cq.model.language import language_of
from cq.model.tuning import Tuning
from cq.parse import Corpus
from cq.progress import timed
from cq.rank import files_named, path_role, suggest_names
from cq.rewrite import RECEIVERS, CallerModel, Rewrite, defined_names, rewrite_query, split_dotted
from cq.rewrite.message import writes_message
from cq.rewrite.paths import FileTable, frames_in_tree
from cq.rewrite.question import understand

# matched: the first rung (as typed, a question with its rewrite); literal: the identifier
# as text; filled: a phrase's format string (``Question.filled``); rewritten: the
# zero-results rewrite; called: the name a call pasted calls; not_found: a name, with the
# names nearest it; nothing: no rung left that matched.
Stop = Literal["matched", "literal", "filled", "rewritten", "called", "not_found", "nothing"]
# A call written alone on its line: ``Command::new("app")``, ``schema.load(data)``, ``run()``
_CALL = re.compile(r"\s*(?P<name>[^\W\d]\w*(?:(?:\.|::)[^\W\d]\w*)*)\s*\(.*\)\s*;?\s*")


class Climb(msgspec.Struct, frozen=True, kw_only=True):
    """How the ladder found its candidates (a frozen record: the index's live run travels
    beside it, ``Ladder.climb``). ``mode_chain``: the modes searched, in order. The
    candidates travel beside it too, so that the search can let their matches go."""

    patterns: tuple[Pattern, ...]
    mode_chain: tuple[QueryMode, ...]
    stopped: Stop
    focus: Focus = "all"  # the request's (--focus), else the rewrite's guess
    rewrite: Rewrite | None = None
    suggestions: tuple[Suggestion, ...] | None = None
    missing: str | None = None  # the name a rewritten question wrote that matched nothing
    # the name a question asked about that no file holds, searched as the one defined name
    # of the same words (``Ladder._respelled``: "where is getBucket defined?" -> get_bucket)
    respelled: str | None = None
    # the question the candidates answer when not the one asked: a pasted traceback's last
    # message searched as a phrase (``Ladder._raised``), its text the traceback's
    answered: Question | None = None

    @property
    def mode(self) -> QueryMode:
        """The mode whose search found the candidates (the first one when none did)."""
        last = self.stopped in ("literal", "filled", "called")
        return self.mode_chain[-1] if last else self.mode_chain[0]

    @property
    def fallback_applied(self) -> bool:
        """The identifier was searched again as text."""
        return len(self.mode_chain) > 1


class Ladder:
    """One search's rungs over its ``corpus``: rg, the rewrite (``model``: the caller's), the
    index (``deadline``: the search's, ``time.monotonic``) and the names nearest a name;
    ``switches``: the request's focus, rewrite and index switches (``Settings.ladder``);
    ``llm``: the configured endpoint's settings (``Settings.llm``; None: the offline rewrite)."""

    def __init__(
        self,
        question: Question,
        corpus: Corpus,
        tuning: Tuning,
        *,
        scope: Scope,
        switches: LadderSettings,
        timings: dict[str, float],
        on_file: Callable[[int, int], None] | None = None,
        on_status: Callable[[str], None] = lambda _: None,
        model: CallerModel | None = None,
        llm: LlmEnv | None = None,
        deadline: float | None = None,
    ) -> None:
        self.question, self.corpus, self.tuning = question, corpus, tuning
        self.switches = switches
        self.scope = scope  # which files rg and the names nearest a name read (Settings.scope)
        self.timings, self.on_file, self.on_status = timings, on_file, on_status
        self.model, self.llm, self.deadline = model, llm, deadline
        self._index: IndexRun | None = None

    def climb(self) -> tuple[Candidates, Climb, IndexRun | None]:
        """Run the rungs until one matches or none is left. The third value is the index's
        run when the search consults it (a thread updating the index): the caller holds it
        from here and closes it when the search ends. It is closed here only when the climb
        fails (a cancelled search, a bad pattern)."""
        try:
            candidates, climb = self._climb()
            return candidates, climb, self._index
        except BaseException:
            if self._index is not None:
                self._index.close()
            raise

    def _climb(self) -> tuple[Candidates, Climb]:
        q, switches = self.question, self.switches
        own = patterns_for_query(q.typed, q.mode) if q.typed is not None else ()
        plain = q.mode_requested is None and switches.rewrite is None  # cq decides how
        raised = self._raised(q.raised) if q.raised is not None and plain else None
        if raised is not None:
            return raised
        if q.intent == "phrase" and own:
            phrase = self._phrase(own)
            if phrase is not None:
                return phrase
        rewrite = self._rewrite(q.trigger) if q.trigger is not None else None
        patterns = own + (rewrite.plan.patterns if rewrite else ())
        with timed(self.timings, "candidates"):
            found = self._search(patterns, widened=rewrite is not None)
        if found.matches and plain and rewrite is None and (also := self._call_too(own)):
            return also
        if found.matches:
            return self._climbed(found, patterns, (q.mode,), "matched", rewrite)
        chain: tuple[QueryMode, ...] = (q.mode,)
        if q.mode == "identifier" and q.mode_requested is None and q.typed is not None:
            literal = patterns_for_query(q.typed, "literal")
            chain += ("literal",)
            with timed(self.timings, "candidates_fallback"):
                retry = self._search(literal, widened=False)
            if retry.matches and not _inside_names(retry.matches):
                return self._climbed(retry, literal, chain, "literal", rewrite)
            if retry.matches:  # only inside longer names: a near-miss of a defined name?
                with timed(self.timings, "suggest"):
                    nearest = suggest_names(q.typed, self.scope, self.corpus, self.tuning.report)
                same = self._respelled(nearest, rewrite) if nearest else None
                if same is not None:
                    return same
                if nearest:
                    return self._climbed(found, patterns, (q.mode,), "not_found", rewrite, nearest)
                return self._climbed(retry, literal, chain, "literal", rewrite)
        if rewrite is not None:
            return self._nothing(found, patterns, chain, rewrite)
        if q.typed:  # a file name is answered with the tree's files of that name, in any mode
            with timed(self.timings, "suggest"):
                nearest = files_named(
                    q.typed, self.scope, self.corpus, self.tuning.report.suggestions
                )
                if nearest is None and q.mode == "identifier":
                    nearest = suggest_names(q.typed, self.scope, self.corpus, self.tuning.report)
            same = self._respelled(nearest, None) if nearest else None
            if same is not None:
                return same
            if nearest is not None:
                return self._climbed(found, patterns, chain, "not_found", suggestions=nearest)
        if switches.rewrite is not None or q.mode_requested is not None:
            # --no-rewrite; or -F, --regex, -w: the user said how to search it, and a
            # rewrite's guess would answer for text that is nowhere
            return self._climbed(found, patterns, chain, "nothing")
        callee = _called(q.typed) if q.mode == "literal" and q.typed else None
        if callee is not None:  # nowhere verbatim: the function it calls, as if typed alone
            named = patterns_for_query(callee, "identifier")
            chain += ("identifier",)
            with timed(self.timings, "candidates_fallback"):
                found = self._search(named, widened=False)
            if found.matches:
                return self._climbed(found, named, chain, "called")
        with timed(self.timings, "rewrite"):
            rewrite = rewrite_query(
                q,
                self.scope,
                "zero_results",
                self.tuning.rewrite,
                self.corpus.listing,
                self.model,
                self.llm,
            )
        self._index = IndexRun.start(
            self.scope,
            switches.use_index,
            q,
            self.on_status,
            self.tuning,
            rewrite.summary,
            self.corpus.listing,
            self.deadline,
        )
        if not rewrite.plan.patterns:
            return self._climbed(found, patterns, chain, "nothing", rewrite)
        patterns = own + rewrite.plan.patterns
        with timed(self.timings, "candidates_rewritten"):
            found = self._search(patterns, widened=True)
        if not found.matches:
            return self._nothing(found, patterns, chain, rewrite)
        return self._climbed(found, patterns, chain, "rewritten", rewrite)

    def _phrase(self, own: tuple[Pattern, ...]) -> tuple[Candidates, Climb] | None:
        """A phrase searched as text first, before any rewrite: where it is written verbatim,
        else where its format string is (``Question.filled``); -F stops here either way, since
        the user asked for that text. None: go on up the ladder (the rewrite)."""
        q = self.question
        if q.place is not None and q.mode_requested is None:
            own = (*own, *self._placed(q.place))
        with timed(self.timings, "candidates"):
            found = self._search(own, widened=False)
        runs = q.runs if q.mode_requested is None else ()  # -F: that text, or nothing
        if found.matches and ((q.filled is None and not runs) or not _only_tests(found)):
            return self._climbed(found, own, (q.mode,), "matched")
        chain: tuple[QueryMode, ...] = (q.mode,)
        if q.filled is not None:
            # nowhere verbatim, or only in tests asserting the message the code formats
            # (``pytest.raises(match="... 'alpha' ...")``): its format string as well
            chain += ("regex",)
            filled = patterns_for_query(q.filled, "regex")
            both = (*own, *filled) if found.matches else filled
            with timed(self.timings, "candidates_fallback"):
                retry = self._search(both, widened=False)
            if len(retry.matches) > len(found.matches):
                return self._climbed(retry, both, chain, "filled")
            if found.matches:
                return self._climbed(found, own, (q.mode,), "matched")
        # Nowhere whole: a long message written in pieces (its sentences), then a format
        # string split over two lines or filled with a plain word (its runs inside strings).
        for regexes in (q.sentences, q.pieces):
            if found.matches or not regexes:
                continue
            chain += () if "regex" in chain else ("regex",)
            parts = tuple(p for r in regexes for p in patterns_for_query(r, "regex"))
            with timed(self.timings, "candidates_fallback"):
                retry = self._search(parts, widened=False)
            if retry.matches and regexes is q.pieces:
                retry, parts = self._most_specific(retry, parts)
            if retry.matches:
                return self._climbed(retry, parts, chain, "filled")
        if runs:  # nowhere whole outside the tests: its longest head or tail in a string
            chain += () if "regex" in chain else ("regex",)
            run = self._longest_run(runs, own if found.matches else ())
            if run is not None:
                return self._climbed(run[0], run[1], chain, "filled")
        if found.matches:  # only a test's copy of it
            return self._climbed(found, own, (q.mode,), "matched")
        if q.mode_requested is not None or self.switches.rewrite is not None:
            return self._climbed(found, own, chain, "nothing")
        return None

    def _call_too(self, own: tuple[Pattern, ...]) -> tuple[Candidates, Climb] | None:
        """A call typed alone whose text is found (``Arg::new()`` in a doc comment, a test's
        ``Utc::now()``): searched as well as the name it calls, whose definition is what it
        asks about, the text's hits listed beside it. None: no call, or no line found defines
        the name (a definition's keyword before it)."""
        q = self.question
        callee = _called(q.typed) if q.mode == "literal" and q.typed else None
        if callee is None:
            return None
        both = (*own, *patterns_for_query(callee, "identifier"))
        with timed(self.timings, "candidates_fallback"):
            found = self._search(both, widened=False)
        last = split_dotted(callee)[-1]
        defines = re.compile(rf"\b(?:def|fn|class|struct|enum|trait)\s+{re.escape(last)}\b")
        if not any(defines.search(m.line_text) for m in found.matches):
            return None  # a builtin's, a macro's: its calls would bury the text's hits
        return self._climbed(found, both, (q.mode, "identifier"), "called")

    def _placed(self, place: tuple[str, int]) -> tuple[Pattern, ...]:
        """The string a pasted panic's named place (``Question.place``) writes its message
        with, searched beside the message: the message a value was filled into is often
        written whole only in a test asserting it (``#[should_panic = "..."]``), and the
        place the panic names is where it comes from. () when the tree holds no such file
        (a dependency's path), or no literal on that line writes the message (another
        version of the file)."""
        q = self.question
        rels = FileTable(self.corpus.listing.files()).resolve(place[0])
        language = language_of(rels[0]) if len(rels) == 1 else None
        source = self.corpus.source(rels[0], language) if language is not None else None
        lines = source.lines() if source is not None else None
        if lines is None or not 1 <= place[1] <= len(lines) or q.typed is None:
            return ()
        line = lines[place[1] - 1].rstrip("\r\n")
        start = writes_message(line, q.typed)
        return () if start is None else (Pattern(text=line[start:].rstrip(), kind="literal"),)

    def _raised(self, message: str) -> tuple[Candidates, Climb] | None:
        """A pasted traceback none of whose frames is in the tree (the user's program calling
        a library's client): its last message searched as a phrase, as if pasted alone, since
        the code that raises it is all the tree holds of it. None: a frame is in the tree (the
        innermost one answers, ``cq.rewrite.paths``), or the message is nowhere but in tests."""
        q = self.question
        if frames_in_tree(q.mentions, self.corpus.listing.files()):
            return None
        phrase = understand(message)
        own = patterns_for_query(phrase.typed, phrase.mode) if phrase.typed is not None else ()
        if phrase.intent != "phrase" or not own:
            return None
        alone = Ladder(
            phrase,
            self.corpus,
            self.tuning,
            scope=self.scope,
            switches=self.switches,
            timings=self.timings,
            on_file=self.on_file,
            on_status=self.on_status,
            model=self.model,
            llm=self.llm,
            deadline=self.deadline,
        )
        found = alone._phrase(own)
        if found is None or _only_tests(found[0]):
            return None
        asked = msgspec.structs.replace(phrase, text=q.text)
        return found[0], msgspec.structs.replace(found[1], answered=asked)

    def _most_specific(
        self, found: Candidates, parts: tuple[Pattern, ...]
    ) -> tuple[Candidates, tuple[Pattern, ...]]:
        """Of a phrase's pieces (longest first), the longest found in a file outside the tests,
        searched alone: a shorter piece is a lead-in many messages share ("An error occurred
        (...) when calling the ... operation:" before the tree's own "The specified bucket
        does not exist"), and its matches would bury the one site that writes the message."""
        code = [m.text for m in found.matches if path_role(m.file) != "test"]
        best = next((p for p in parts if any(re.search(p.text, t) for t in code)), None)
        if best is None or all(re.search(best.text, m.text) for m in found.matches):
            return found, parts
        with timed(self.timings, "candidates_fallback"):
            return self._search((best,), widened=False), (best,)

    def _longest_run(
        self, runs: tuple[str, ...], own: tuple[Pattern, ...]
    ) -> tuple[Candidates, tuple[Pattern, ...]] | None:
        """A phrase nowhere whole outside the tests, by the longest of its leading or
        trailing runs found in a string outside them (``Question.runs``, longest first): all
        are searched at once, then the longest found alone (with ``own``: the phrase as
        typed, found in tests), so that a shorter run many messages share brings none of
        theirs. None: no run is anywhere but in tests."""
        every = tuple(p for r in runs for p in patterns_for_query(r, "regex"))
        with timed(self.timings, "candidates_fallback"):
            found = self._search(every, widened=False)
        code = [m.text for m in found.matches if path_role(m.file) != "test"]
        if not code:
            return None
        longest = max(len(t) for t in code)
        texts = {t for t in code if len(t) == longest}
        best = next(r for r in runs if any(re.fullmatch(r, t) for t in texts))
        patterns = (*own, *patterns_for_query(best, "regex"))
        with timed(self.timings, "candidates_fallback"):
            return self._search(patterns, widened=False), patterns

    def _respelled(
        self, nearest: tuple[Suggestion, ...], rewrite: Rewrite | None
    ) -> tuple[Candidates, Climb] | None:
        """A question about a name no file holds ("where is getBucket defined?"), searched as
        the one name the tree defines with the same words in another spelling (``distance``
        0: snake_case for camelCase, other capitals): what the question asks about, under the
        tree's spelling; the report says so (``Summary.respelled``). A name typed alone stays
        not found, with the names nearest it: rg's habit of finding what was typed. None:
        no question, or not exactly one such name."""
        q = self.question
        names = {s.name for s in nearest if s.distance == 0 and s.kind != "file"}
        if q.asked_name is None or len(names) != 1:
            return None
        (name,) = names
        patterns = patterns_for_query(name, "identifier")
        with timed(self.timings, "candidates_fallback"):
            found = self._search(patterns, widened=False)
        if not found.matches:
            return None
        climbed = self._climbed(found, patterns, (q.mode,), "matched", rewrite)
        return climbed[0], msgspec.structs.replace(climbed[1], respelled=name)

    def _nothing(
        self,
        found: Candidates,
        patterns: tuple[Pattern, ...],
        chain: tuple[QueryMode, ...],
        rewrite: Rewrite,
    ) -> tuple[Candidates, Climb]:
        """A rewritten question that matched nothing: when the text writes exactly one of the
        names the rewrite searched ("who calls `get_bukcet`?"), that name is nowhere, said so
        with the defined names nearest it, as a name typed alone is."""
        written = [n for n in rewrite.summary.identifiers if n in self.question.written]
        if len(written) != 1:
            return self._climbed(found, patterns, chain, "nothing", rewrite)
        with timed(self.timings, "suggest"):
            nearest = suggest_names(written[0], self.scope, self.corpus, self.tuning.report)
        return self._climbed(
            found, patterns, chain, "not_found", rewrite, nearest, missing=written[0]
        )

    def _rewrite(self, trigger: str) -> Rewrite:
        """A question's rewrite, the index brought up to date meanwhile (``cq.index.evidence``)
        and kept only when the rewritten search consults it."""
        listing = self.corpus.listing
        # The index lists the tree once the rewrite's scan of its names is done: both rg
        # runs keep every core busy, and side by side a first question's scan took 0.18 s
        # instead of 0.09 on the stdlib (bench/results/2026-11-30-speed14).
        scanned = threading.Event()
        self._index = IndexRun.start(
            self.scope,
            self.switches.use_index,
            self.question,
            self.on_status,
            self.tuning,
            None,
            listing,
            self.deadline,
            after=scanned,
        )
        with timed(self.timings, "rewrite"):
            try:
                vocabulary = defined_names(self.scope, listing, scanned=scanned.set)
            finally:
                scanned.set()
            rewrite = rewrite_query(
                self.question,
                self.scope,
                trigger,
                self.tuning.rewrite,
                listing,
                self.model,
                self.llm,
                vocabulary,
            )
        self._index = self._index.kept(rewrite.summary) if self._index is not None else None
        return rewrite

    def _search(self, patterns: tuple[Pattern, ...], *, widened: bool) -> Candidates:
        """rg over the patterns; no patterns (a bare multi-line text, not rewritten) finds
        nothing. ``widened``: under a rewritten search's caps (``_widened``)."""
        if not patterns:
            return Candidates(matches=(), stats=SearchStats(), by_language={})
        scope = _widened(self.scope) if widened else self.scope
        return collect_candidates(scope, patterns, self.on_file, self.tuning.report, self.corpus)

    def _climbed(
        self,
        candidates: Candidates,
        patterns: tuple[Pattern, ...],
        chain: tuple[QueryMode, ...],
        stopped: Stop,
        rewrite: Rewrite | None = None,
        suggestions: tuple[Suggestion, ...] | None = None,
        *,
        missing: str | None = None,
    ) -> tuple[Candidates, Climb]:
        return candidates, Climb(
            patterns=patterns,
            mode_chain=chain,
            stopped=stopped,
            focus=self.switches.focus or (rewrite.plan.focus if rewrite else "all"),
            rewrite=rewrite,
            suggestions=suggestions,
            missing=missing,
        )


def _called(typed: str) -> str | None:
    """The name a call written alone calls (``Command::new("app")`` -> ``Command::new``,
    ``self.run()`` -> ``run``: the receiver is no owner); None for any other text."""
    call = _CALL.fullmatch(typed)
    if call is None:
        return None
    parts = split_dotted(call["name"])
    if parts[0] in RECEIVERS and len(parts) > 1:
        parts = parts[1:]
    return ("::" if "::" in call["name"] else ".").join(parts)


def _inside_names(matches: tuple[RawMatch, ...]) -> bool:
    """Every match sits inside a longer word (``getBucket`` in ``InvalidTargetBucket``): the
    name itself is nowhere, only text that happens to spell it."""
    for m in matches:
        if not isinstance(m.line_window, msgspec.UnsetType):
            return False  # a shortened line: its neighbours are not known
        before = m.line_text[m.col - 1 : m.col] if m.col > 0 else ""
        after = m.line_text[m.end_col : m.end_col + 1]
        if not (_is_word(before) or _is_word(after)):
            return False
    return True


def _is_word(char: str) -> bool:
    return bool(char) and (char.isalnum() or char == "_")


def _widened(scope: Scope) -> Scope:
    """A rewritten search's caps: the profile's ``question_*`` ones where higher
    (``Limits``: its patterns are guesses, and a cap keeps the first files in path order)."""
    limits = scope.limits
    wider = msgspec.structs.replace(
        limits,
        max_files=max(limits.max_files, limits.question_max_files),
        max_total_matches=max(limits.max_total_matches, limits.question_max_total_matches),
    )
    return msgspec.structs.replace(scope, limits=wider)


def _only_tests(found: Candidates) -> bool:
    """Every match is in a test file: the text found is a test's copy of what the code
    writes."""
    return all(path_role(m.file) == "test" for m in found.matches)
