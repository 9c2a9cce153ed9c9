"""Cut a Python file down to the statements around its hits, so a cold search parses those.

Parsing is most of a cold search, and most of a file's bytes are nowhere near its hits (for
``register`` on the stdlib, the methods holding the hits are a small share of the bytes of
the files holding them: bench/results/2026-11-29-figures-from-cq.md). A *slice* is a run of
whole statements: the top-level statement holding a hit (a ``def``/``class`` with its
decorators, or any statement that surely starts on its line), up to the next top-level
statement; inside a class, the member holding it, up to the class's next statement, parsed
under a stand-in ``class Name:`` header (and a stand-in ``pass`` when more members follow,
so trailing comments stay in the class as in the file); inside a function (top-level or a
member), the statement of its body holding the hit, under a stand-in ``def name():`` line
after the class's (and again inside a function defined there): a long function's other
statements cost nothing. A slice never starts with a string: as a slice's first statement it
would become a docstring.

A file's slices are parsed as one text, each after its stand-in header, one after the other
(parsing them in place, after newlines standing for the bytes between them, would cost as
much as the whole file: the lexer walks every newline); a hit is looked up in that text's
records at its offset less its slice's shift (``analyze.sliced_records``); scopes come out as
``Name.method``.

Boundaries are found by regex over lines, after one pass that finds the strings spanning
lines (``strings.py``: so ``def`` at column 0 inside a triple-quoted string never starts a
slice). What the
scan gets wrong the parse catches: a slice whose parse has an error sends the whole file to
a full parse.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from functools import cache

from cq.classify.slice_plan import Slice, SlicePlan, joined
from cq.classify.strings import multiline_strings
from cq.model.tuning import ParseTuning

_HEADER = re.compile(rb"(?:@|(?:async[ \t]+)?def\b|class\b)")
# A line that starts a statement (the match starts at the newline before); clauses that go
# on with the statement above (else, except, ...) do not.
_CLAUSE = rb"(?!(?:else|elif|except|finally)\b)"
_TOP_STATEMENT = re.compile(rb"\n(?=[^\s#)\]}])" + _CLAUSE)  # the cheap test first
_INDENTED_STATEMENT = re.compile(rb"\n([ \t]+)[^\s#)\]}]")
_CLASS_NAME = re.compile(rb"class[ \t]+([^\s(:\[]+)")
_DEF_NAME = re.compile(rb"(?:async[ \t]+)?def[ \t]+([^\s(\[]+)")
_PLAIN_START = re.compile(rb"(?![rRbBuUfFtT]{1,2}[\"'])[A-Za-z_]")  # not a string's prefix
_STRING_START = re.compile(rb"[rRbBuUfFtT]{0,2}[\"']")
_CONTINUING = tuple(bytes([c]) for c in b",([{\\+-*/%&|^=<>.@~:")

_MAX_HEADER_LINES = 30
_LOOK_BACK = 2000  # bytes read back over comment lines for a statement's end


def python_slices(data: bytes, hits: list[tuple[int, int]], caps: ParseTuning) -> SlicePlan | None:
    """The slices holding ``hits`` (byte spans), or None: parse the whole file (more hits
    than ``caps.max_slice_hits``, or slices over ``caps.max_sliced_fraction`` of it)."""
    if not hits or len(hits) > caps.max_slice_hits:
        return None
    scan = _Scan(data)
    found: dict[tuple[int, int], int] = {}
    slices: list[Slice] = []
    owners: list[int] = []
    for hit_start, hit_end in hits:
        piece = scan.slice_for(hit_start)
        if piece is None or not (piece.start <= hit_start and hit_end <= piece.end):
            return None
        index = found.setdefault((piece.start, piece.end), len(slices))
        if index == len(slices):
            slices.append(piece)
        owners.append(index)
    if sum(s.end - s.start for s in slices) > caps.max_sliced_fraction * len(data):
        return None
    return joined(slices, owners)


class TopLevel:
    """A Python file's top-level statements as the slices' scan reads them, before a slice
    is cut down to a body's statement: ``run`` gives the whole top-level statements holding
    a byte (one or more: a run the scan cannot split surely). What the scan gets wrong, a
    parse of the run shows as a syntax error (``cq.enrich.python`` then reads the file)."""

    def __init__(self, data: bytes) -> None:
        self._scan = _Scan(data)

    def run(self, hit: int) -> tuple[int, int]:
        """``[start, end)`` of the run holding byte ``hit``: whole lines."""
        scan = self._scan
        found, _ = scan.top_run(scan.data.rfind(b"\n", 0, hit) + 1)
        return self._decorators_above(found.start), found.end

    def _decorators_above(self, start: int) -> int:
        """Where the statement at ``start`` begins with its decorators: a decorator whose
        arguments go on over lines at column 0 (``@deprecated("...",\nsince="1.13")``) is
        no adjacent header to the scan, which starts the slice at the ``def`` (parsed alone,
        the ``def`` reads the same there but without its decorators). Back over the lines
        above that surely start no statement, to the first ``@`` of the run above it."""
        scan = self._scan
        if scan.data.startswith(b"@", start) or not _HEADER.match(scan.data, start):
            return start
        above = bisect_left(scan.tops, start) - 1
        while above >= 0:
            pos = scan.tops[above]
            if scan.data.startswith(b"@", pos):
                start = pos
            elif _HEADER.match(scan.data, pos) or scan._plain_start_at(pos):
                break
            above -= 1
        return start


class _Scan:
    """One file's strings that span lines and its top-level statement lines (headers among
    them); a class's member lines are found when a hit needs them."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        spans = multiline_strings(data)
        self.string_starts = [a for a, _ in spans]
        self.string_ends = [b for _, b in spans]
        found = [m.start() + 1 for m in _TOP_STATEMENT.finditer(data)]
        self.tops = self.code_lines(found)
        self.headers = [pos for pos in self.tops if _HEADER.match(data, pos)]
        if _HEADER.match(data):
            self.headers.insert(0, 0)
        self.bodies: dict[int, tuple[bytes, list[int]] | None] = {}
        self.ends: dict[int, int] = {}  # a def's line -> where its body ends (``_dedent``)

    def is_code(self, pos: int) -> bool:
        """Whether a line start lies outside every string that spans lines."""
        i = bisect_right(self.string_starts, pos) - 1
        return i < 0 or self.string_ends[i] <= pos

    def code_lines(self, lines: list[int]) -> list[int]:
        """The line starts of ``lines`` (sorted) that ``is_code`` keeps, found by the strings
        among them (a few docstrings) rather than line by line (hundreds of lines)."""
        if not lines:
            return lines
        starts, ends = self.string_starts, self.string_ends
        k = bisect_right(ends, lines[0])  # the first string ending past the first line
        last = lines[-1]
        kept: list[int] = []
        at = 0
        while k < len(starts) and starts[k] <= last:
            inside = bisect_left(lines, starts[k], at)
            past = bisect_left(lines, ends[k], inside)
            kept += lines[at:inside]
            at = past
            k += 1
        if at == 0:
            return lines
        return kept + lines[at:]

    def next_top(self, pos: int, stop: int | None = None) -> int | None:
        """The first top-level statement line starting in ``[pos, stop)`` (never 0)."""
        i = bisect_left(self.tops, pos)
        if i < len(self.tops) and (stop is None or self.tops[i] < stop):
            return self.tops[i]
        return None

    def slice_for(self, hit: int) -> Slice | None:
        line = self.data.rfind(b"\n", 0, hit) + 1
        whole, past = self.top_run(line)
        if past is None:
            return whole
        return self._in_body(whole, past, b"", line)

    def top_run(self, line: int) -> tuple[Slice, int | None]:
        """The whole top-level statements holding the line starting at ``line``, and the
        ``def``/``class`` line of the one it is in, when it is in a def, class or decorator
        (None: in an ordinary statement)."""
        anchor = bisect_right(self.headers, line) - 1  # the nearest header at or above
        floor = self.headers[anchor] if anchor >= 0 else 0
        later = self._plain_start(floor, line)
        if later is not None:  # the hit is in an ordinary top-level statement
            return Slice(later, self._end(line)), None
        if anchor < 0:
            return Slice(0, self._end(line)), None  # module-level code above every def
        if not self._top_between(floor, line):  # the hit is in this def, class or decorator
            past = self._past(floor)
            return Slice(self._decorated_from(anchor), self._end(max(line, past))), past
        return Slice(self._decorated_from(anchor), self._end(line)), None

    def _end(self, line: int) -> int:
        """Where the top-level statement holding ``line`` ends: the next one's line."""
        line_end = self.data.find(b"\n", line)
        after = self.next_top(line_end + 1) if line_end >= 0 else None
        return after if after is not None else len(self.data)

    def _past(self, header: int) -> int:
        """The ``def``/``class`` line a run of decorators starting at ``header`` decorates."""
        while self.data.startswith(b"@", header):
            following = self.next_top(header + 1)
            if following is None:
                break
            header = following
        return header

    def _decorated_from(self, anchor: int) -> int:
        """The first of the headers (decorators) directly above ``headers[anchor]``."""
        while (
            anchor > 0
            and self.data.startswith(b"@", self.headers[anchor - 1])
            and self._adjacent(self.headers[anchor - 1], self.headers[anchor])
        ):
            anchor -= 1
        return self.headers[anchor]

    def _top_between(self, floor: int, line: int) -> bool:
        """Whether a top-level statement starts in ``(floor, line]``."""
        return self.next_top(floor + 1, line + 1) is not None

    def _plain_start(self, floor: int, line: int) -> int | None:
        """The last top-level line in ``(floor, line]`` that surely starts a statement
        other than a def or class (see ``_plain_start_at``)."""
        starts = self.tops[bisect_right(self.tops, floor) : bisect_right(self.tops, line)]
        for pos in reversed(starts):
            if _HEADER.match(self.data, pos):
                continue
            if self._plain_start_at(pos):
                return pos
        return None

    def _plain_start_at(self, pos: int) -> bool:
        """A statement surely starts at ``pos``: a plain word (not a string, which as a
        slice's first statement would turn into a docstring) after a line that does not
        continue (no trailing comma, open bracket, operator or comment)."""
        return _PLAIN_START.match(self.data, pos) is not None and not self._continues_before(pos)

    def _continues_before(self, pos: int) -> bool:
        """Whether the last code line above ``pos`` may go on with the line at ``pos``
        (comment lines between them are skipped: they go on with nothing)."""
        low = max(0, pos - _LOOK_BACK)
        end = pos
        while True:
            before = self.data[low:end].rstrip()
            cut = before.rfind(b"\n")
            if cut < 0 and low > 0:
                return True  # no line start within reach: assume it goes on
            last = before[cut + 1 :]
            if not last.lstrip().startswith(b"#"):
                break
            end = low + cut if cut >= 0 else low
            if end <= low:
                return False  # only comments above, up to the file's start
        if b"#" in last:
            last = _code_part(last).rstrip()
        return last.endswith(_CONTINUING)

    def _adjacent(self, earlier: int, later: int) -> bool:
        """No top-level statement between two top-level header lines."""
        return self.next_top(earlier + 1, later) is None

    def _dedent(self, header: int, start: int, end: int, indent: bytes) -> int:
        """The first code line in ``[start, end)`` indented less than ``indent`` (``end`` if
        none): where the body (indented by ``indent``) of the ``def`` at ``header`` surely
        ends, or earlier (a continuation line indented less). Found once per ``def``."""
        if header not in self.ends:
            found = (
                m.start() + 1
                for m in _less_indented(indent).finditer(self.data, start, end)
                if self.is_code(m.start() + 1)
            )
            self.ends[header] = next(found, end)
        return self.ends[header]

    def _past_member(self, here: int, lines: list[int], width: int) -> int:
        """Where the member starting at ``lines[here]`` has its ``def``/``class`` line (after
        its decorators; the statement's own start when it is neither)."""
        while here + 1 < len(lines) and self.data.startswith(b"@", lines[here] + width):
            here += 1
        return lines[here] + width

    def _in_body(self, piece: Slice, def_pos: int, indent: bytes, line: int) -> Slice:
        """``piece`` (a ``def`` or ``class`` at ``def_pos``, indented by ``indent``) cut down
        to the statement of its body that holds the hit's ``line`` (a method with its
        decorators, a class attribute, a statement of a function), parsed under a stand-in
        ``def name():`` or ``class Name:`` line after ``piece``'s own stand-in header, and
        again in a def or class defined there; its head alone when the hit is there
        (``_head``); ``piece`` itself when the hit is not in a body statement that surely
        starts a statement.

        A stand-in ``pass`` follows the statement when more of the body follows it (so a
        comment at its end stays in the body, as in the file); the body's last statement ends
        where ``piece`` does, with its trailer."""
        if self.data[def_pos - len(indent) : def_pos] != indent:
            return piece
        name = _DEF_NAME.match(self.data, def_pos)
        keyword = b"def "
        if name is None:
            name, keyword = _CLASS_NAME.match(self.data, def_pos), b"class "
            if name is None:
                return piece
        line_start = def_pos - len(indent)
        body = self._body_lines(line_start, piece.end)
        if body is None:
            return piece
        body_indent, lines = body
        width = len(body_indent)
        if width <= len(indent) or not body_indent.startswith(indent) or not lines:
            return piece
        ends = self._dedent(line_start, lines[0], piece.end, body_indent)
        if line >= ends:
            return piece  # past the body's end (or a line indented less, taken for it)
        lines = lines[: bisect_left(lines, ends)]
        head = self._head(piece, lines, width, line)
        if head is not None:
            return head
        here = bisect_right(lines, line) - 1
        while here > 0 and not (
            self._is_header(lines[here], width) or self._plain_start_at(lines[here] + width)
        ):
            here -= 1  # a string or a continuation line: whole statements start higher up
        # The first statement follows the header's ``:``, which ``_plain_start_at`` would
        # take for a line that goes on.
        if here < 0 or (here == 0 and _PLAIN_START.match(self.data, lines[0] + width) is None):
            return piece  # from a first statement that is a string
        while here > 0 and self.data.startswith(b"@", lines[here - 1] + width):
            here -= 1  # its decorators
        start = lines[here]
        after = bisect_right(lines, line)
        while 0 < after < len(lines) and self.data.startswith(b"@", lines[after - 1] + width):
            after += 1  # the hit is in a decorator: the statement ends after what it decorates
        stand_in = keyword + name.group(1) + (b"():\n" if keyword == b"def " else b":\n")
        header = piece.header + indent + stand_in
        if after < len(lines):
            inner = Slice(start, lines[after], header, body_indent + b"pass\n")
        else:
            inner = Slice(start, piece.end, header, piece.trailer)
        if not (piece.start <= start and inner.end <= piece.end):
            return piece
        nested = self._past_member(here, lines, width)
        if _DEF_NAME.match(self.data, nested) or _CLASS_NAME.match(self.data, nested):
            return self._in_body(inner, nested, body_indent, line)
        return inner

    def _head(self, piece: Slice, lines: list[int], width: int, line: int) -> Slice | None:
        """``piece`` (a def or class, its body's statement ``lines`` at indent ``width``) cut
        down to its head when the hit's ``line`` is there: its decorators and header line,
        and its docstring when the hit is in it, with a stand-in ``pass`` for the rest of
        the body (the hit's syntax is all in the head: a ``def __init__`` hit does not pay
        for the method's body). None when the hit is in the body past them."""
        stop = 0
        if line >= lines[0]:
            if (
                len(lines) < 2
                or line >= lines[1]
                or not _STRING_START.match(self.data, lines[0] + width)
            ):
                return None
            stop = 1  # in the first statement, a string: the docstring
        body_indent = self.data[lines[0] : lines[0] + width]
        trailer = body_indent + b"pass\n" + piece.trailer
        return Slice(piece.start, lines[stop], piece.header, trailer)

    def _body_lines(self, class_line: int, end: int) -> tuple[bytes, list[int]] | None:
        """The class body's indentation and its statement lines at that indentation
        (computed once per class: a class often holds several hits)."""
        if class_line not in self.bodies:
            self.bodies[class_line] = self._find_body_lines(class_line, end)
        return self.bodies[class_line]

    def _find_body_lines(self, class_line: int, end: int) -> tuple[bytes, list[int]] | None:
        body = self._body_start(class_line, end)
        if body is None:
            return None
        indent = next(
            (
                m.group(1)
                for m in _INDENTED_STATEMENT.finditer(self.data, body - 1, end)
                if self.is_code(m.start() + 1)
            ),
            None,
        )
        if indent is None:
            return None
        lines = self.code_lines(
            [m.start() + 1 for m in _at_indent(indent).finditer(self.data, body - 1, end)]
        )
        return indent, lines

    def _body_start(self, class_line: int, end: int) -> int | None:
        """The line after the header's closing ``:`` (looked for over a few lines)."""
        pos = class_line
        for _ in range(_MAX_HEADER_LINES):
            line_end = self.data.find(b"\n", pos, end)
            if line_end < 0:
                return None
            if _code_part(self.data[pos:line_end]).rstrip().endswith(b":"):
                return line_end + 1
            pos = line_end + 1
        return None

    def _is_header(self, pos: int, width: int) -> bool:
        return _HEADER.match(self.data, pos + width) is not None


@cache
def _at_indent(indent: bytes) -> re.Pattern[bytes]:
    """Statement lines at exactly ``indent``."""
    return re.compile(rb"\n" + re.escape(indent) + _CLAUSE + rb"[^\s#)\]}]")


@cache
def _less_indented(indent: bytes) -> re.Pattern[bytes]:
    """Lines with code that do not start with ``indent`` (blank and comment lines do not
    end a block)."""
    return re.compile(rb"\n(?!" + re.escape(indent) + rb")(?=[ \t]*[^\s#])")


def _code_part(line: bytes) -> bytes:
    """A line without its trailing comment (a ``#`` outside quotes)."""
    if b"#" not in line:
        return line
    quote = 0
    escaped = False
    for i, c in enumerate(line):
        if escaped:
            escaped = False
        elif c == 92:  # backslash
            escaped = True
        elif quote:
            quote = 0 if c == quote else quote
        elif c in (34, 39):  # " '
            quote = c
        elif c == 35:  # #
            return line[:i]
    return line
