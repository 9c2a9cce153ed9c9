"""Run rg as a streaming subprocess and collect ``RawMatch`` records under the caps."""

from __future__ import annotations

import os
import re
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import msgspec

from cq.candidates.limits import CapTracker
from cq.candidates.lines import CrLines, place
from cq.candidates.patterns import pattern_regex
from cq.candidates.rg_errors import glob_error, regex_error
from cq.candidates.rg_events import Begin, Match, Summary, decode_event, strip_terminator
from cq.errors import PatternError, SearchFailedError, UsageError
from cq.model import Language, Pattern, RawMatch, Scope, SearchStats
from cq.model.language import language_of, languages_for
from cq.model.tuning import ReportTuning
from cq.parse import Corpus
from cq.prefork import held_still
from cq.terminal import visible, warn
from cq.tools import find_rg, rg_env, rg_types

_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_WARNINGS = 5  # unreadable files named on stderr; the rest are counted


class Candidates(msgspec.Struct, frozen=True):
    """All matches of one rg run, with overall and per-language statistics."""

    matches: tuple[RawMatch, ...]
    stats: SearchStats
    by_language: dict[str, SearchStats]


def collect_candidates(
    scope: Scope,
    patterns: tuple[Pattern, ...],
    on_file: Callable[[int, int], None] | None = None,
    report: ReportTuning | None = None,
    corpus: Corpus | None = None,
) -> Candidates:
    """Search ``patterns`` under the scope's root, streaming and capping as rg runs.

    A files or total-matches cap stops rg early; since rg's thread order varies, such a run is
    repeated with ``--sort path`` so identical searches always keep the same matches.
    ``on_file(matched_files, matches)`` is called as each new matching file arrives. The
    rare file cq must read here (lone CRs, ``CrLines``) is read by the search's ``corpus``.
    """
    root = Path(scope.root)  # checked with in_dir and the globs by ``cq.confine``
    report = report or ReportTuning()
    corpus = corpus or Corpus(root, remember=scope.use_cache)
    for sort in (False, True):
        run = _RgRun(
            scope, patterns, root, sort=sort, on_file=on_file, report=report, corpus=corpus
        )
        run.execute()
        if run.tracker.caps_hit not in ("files", "total_matches"):
            break
    return run.result()


def build_rg_argv(scope: Scope, patterns: tuple[Pattern, ...], sort: bool) -> list[str]:
    """The full rg command line; patterns always follow ``-e``."""
    argv = [find_rg(), "--json", "--no-config", "--no-ignore-messages"]
    argv += ["--max-count", str(scope.limits.max_matches_per_file + 1)]
    if scope.ignore_case:
        argv.append("--ignore-case")
    if sort:
        argv += ["--sort", "path"]
    argv += scope_args(scope)
    for pattern in patterns:
        if "\0" in pattern.text:  # no argv can carry it, and rg never matches NUL in text
            raise UsageError("the query holds a NUL character, which no text file matches")
        if _SURROGATE.search(pattern.text):  # bytes of a command line that were not UTF-8
            raise UsageError("the query is not valid UTF-8")
        argv += ["-e", pattern_regex(pattern)]
    argv += ["--", scope.in_dir or "."]
    return argv


def scope_args(scope: Scope) -> list[str]:
    """The rg flags choosing which files a search reads (``--files`` lists the same)."""
    argv = ["--max-depth", str(scope.limits.max_depth)]
    argv += ["--max-filesize", str(scope.limits.max_file_size_bytes)]
    if scope.hidden:
        argv.append("--hidden")
    if scope.no_ignore:
        argv.append("--no-ignore")
    argv += rg_types(*languages_for(scope.lang))
    for glob in scope.include:
        argv += ["--glob", glob]
    for glob in scope.exclude:
        argv += ["--glob", "!" + glob]
    return argv


class _RgRun:
    """One rg subprocess, read line by line, stopped as soon as a cap says so."""

    def __init__(
        self,
        scope: Scope,
        patterns: tuple[Pattern, ...],
        root: Path,
        *,
        sort: bool,
        on_file: Callable[[int, int], None] | None,
        report: ReportTuning,
        corpus: Corpus,
    ) -> None:
        self.scope, self.report = scope, report
        self.patterns = patterns
        self.root = root
        self.sort = sort
        self.on_file = on_file
        self.tracker = CapTracker(scope.limits)
        self.matches: list[RawMatch] = []
        self.dropped_by_scope = 0
        self.scanned_files: int | None = None
        self.timed_out = False
        self.killed = False
        self._cr_lines = CrLines(corpus)
        # The file of the last match event (rg's path text, relative path, language): its
        # next lines skip the path and scope work (an audit search has 36,000 match events).
        self._file: tuple[str | None, str, Language] = (None, "", "python")
        self._attributed: dict[str, tuple[int, ...]] = {}  # match text -> its patterns

    def execute(self) -> None:
        with held_still():  # rg keeps every core busy: a standby readying waits (cq.prefork)
            self._execute()

    def _execute(self) -> None:
        argv = build_rg_argv(self.scope, self.patterns, self.sort)
        proc = subprocess.Popen(
            argv,
            cwd=self.root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=1 << 16,
            env=rg_env(),
        )
        timer = threading.Timer(self.scope.limits.timeout_seconds, self._on_timeout, (proc,))
        timer.daemon = True
        timer.start()
        stderr = _Drain(proc)  # read as rg runs: a full stderr pipe would stall rg
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                try:
                    event = decode_event(line)
                except msgspec.DecodeError:
                    if self.killed:
                        break  # the line was cut when rg was stopped
                    raise SearchFailedError("rg produced unreadable output") from None
                self._handle(event)
                if self.tracker.stopped:
                    self._kill(proc)
                    break
        except BaseException:  # a cancelled search (raised by on_file), a decode error, ^C
            self._kill(proc)
            raise
        finally:
            timer.cancel()
            timer.join()  # gone before classification asks whether it may fork
            if self.killed:
                proc.stdout.close()  # type: ignore[union-attr]
            rc = proc.wait()
            messages = stderr.text()
        if rc == 2 and not self.killed and not self.timed_out:
            self._rg_errors(messages)

    def _on_timeout(self, proc: subprocess.Popen[bytes]) -> None:
        self.timed_out = True
        self._kill(proc)

    def _kill(self, proc: subprocess.Popen[bytes]) -> None:
        self.killed = True
        if proc.poll() is None:
            proc.kill()

    def _rg_errors(self, messages: list[str]) -> None:
        """Exit status 2 after a finished search (rg printed its summary) means some files
        could not be read: warn and go on. Without a summary rg failed as a whole."""
        if self.scanned_files is not None:
            for message in messages[:_MAX_WARNINGS]:
                warn(f"{message.removeprefix('rg: ').removeprefix('./')} (skipped)")
            if len(messages) > _MAX_WARNINGS:
                warn(f"{len(messages) - _MAX_WARNINGS} more files or folders could not be read")
            return
        lines = [message.removeprefix("rg: ") for message in messages]
        explained = regex_error(lines, [pattern_regex(p) for p in self.patterns])
        if explained is not None:
            raise PatternError(visible(explained))
        message = visible(" ".join(" ".join(messages).split()))
        if (bad_glob := glob_error(message, tuple(self.scope.exclude))) is not None:
            raise UsageError(bad_glob)
        if "regex" in message.lower():
            raise PatternError(f"invalid pattern: {message}")
        raise SearchFailedError(f"rg failed: {message or 'exit status 2'}")

    def _handle(self, event: object) -> None:
        if isinstance(event, Match):
            self._on_match(event)
        elif isinstance(event, Summary):
            self.scanned_files = event.data.stats.searches
        elif isinstance(event, Begin):
            return

    def _on_match(self, event: Match) -> None:
        data = event.data
        if data.path.text is not None and data.path.text == self._file[0]:
            path, language = self._file[1], self._file[2]  # rg sends a file's lines together
        else:
            # a name that is not UTF-8 as the index and the file system read it (its bytes as
            # lone surrogates): the file opens for enrichment and is one file, not two
            path = _relative(os.fsdecode(data.path.raw()))
            language = language_of(path, self.scope.lang)
            if language is None:
                self.dropped_by_scope += len(data.submatches)
                return
            known = self.tracker.matched_files
            if not self.tracker.admit_file(path):
                return
            if self.on_file is not None and self.tracker.matched_files != known:
                self.on_file(self.tracker.matched_files, len(self.matches))
            self._file = (data.path.text, path, language)
        raw_line = strip_terminator(data.lines.raw())
        placed = place(raw_line, [(sub.start, sub.end) for sub in data.submatches], self.report)
        line = data.line_number or 0
        if b"\r" in raw_line:
            self._cr_lines.learn(path, language, self.matches)
        renumbered = self._cr_lines.line_ends  # files read for their lone CRs (rare)
        for spot in placed:
            if not self.tracker.admit_match(path):
                if self.tracker.stopped:
                    return
                continue
            byte_start = data.absolute_offset + spot.start
            self.matches.append(
                RawMatch(
                    file=path,
                    line=(renumbered and self._cr_lines.line(path, byte_start)) or line + spot.row,
                    col=spot.col,
                    end_col=spot.end_col,
                    byte_start=byte_start,
                    byte_end=data.absolute_offset + spot.end,
                    text=spot.text,
                    line_text=spot.line_text,
                    language=language,
                    patterns=self._attribute(spot.text),
                    line_window=spot.window,
                )
            )

    def _attribute(self, text: str) -> tuple[int, ...]:
        """Which patterns produced this match text (the one pattern when there is only one);
        worked out once per distinct text (a question's 35,000 matches share a few hundred)."""
        if len(self.patterns) == 1:
            return (0,)
        hits = self._attributed.get(text)
        if hits is None:
            fold = self.scope.ignore_case
            key = text.casefold() if fold else text
            hits = tuple(
                i
                for i, p in enumerate(self.patterns)
                if p.kind == "regex" or (p.text.casefold() if fold else p.text) == key
            ) or tuple(range(len(self.patterns)))
            self._attributed[text] = hits
        return hits

    def result(self) -> Candidates:
        overall = SearchStats(
            scanned_files=self.scanned_files,
            matched_files=self.tracker.matched_files,
            total_matches=len(self.matches),
            truncated=self.tracker.caps_hit != "none" or self.timed_out,
            timed_out=self.timed_out,
            caps_hit=self.tracker.caps_hit,
            dropped_by_scope=self.dropped_by_scope,
        )
        return Candidates(
            matches=tuple(self.matches),
            stats=overall,
            by_language=_per_language(self.matches, overall, languages_for(self.scope.lang)),
        )


def _per_language(
    matches: list[RawMatch], overall: SearchStats, languages: tuple[Language, ...]
) -> dict[str, SearchStats]:
    """Split the overall statistics into one partition per language."""
    out: dict[str, SearchStats] = {}
    for lang in languages:
        own = [m for m in matches if m.language == lang]
        out[lang] = msgspec.structs.replace(
            overall,
            scanned_files=overall.scanned_files if len(languages) == 1 else None,
            matched_files=len({m.file for m in own}),
            total_matches=len(own),
            dropped_by_scope=overall.dropped_by_scope if len(languages) == 1 else 0,
        )
    return out


class _Drain:
    """rg's stderr, read by a thread while stdout streams; the first lines are kept."""

    _KEEP = 64 * 1024  # bytes: a tree of unreadable files must not fill memory

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self._stream = proc.stderr
        self._kept = b""
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self._stream is not None
        for chunk in iter(lambda: self._stream.read(1 << 16), b""):  # type: ignore[union-attr]
            if len(self._kept) < self._KEEP:
                self._kept += chunk[: self._KEEP - len(self._kept)]

    def text(self) -> list[str]:
        """The lines rg wrote to stderr (after it exited)."""
        self._thread.join()
        return [line for line in self._kept.decode("utf-8", "replace").splitlines() if line]


def _relative(path: str) -> str:
    path = path.replace(os.sep, "/") if os.sep != "/" else path
    return path[2:] if path.startswith("./") else path
