"""An independent labeller of identifier occurrences, built only from CPython's ``ast`` and
``tokenize``: the reference ``classify_accuracy.py`` measures cq's classifier against.

Categories follow cq's documented semantics (see ``cq/classify/python_records.py``): Store
context and parameters are ``assignment``, callees and decorator names ``callsite``, def/class
names ``definition``, names in ``import`` / ``from ... import`` statements ``import`` /
``from_import``, names inside param/return/annotated-assignment annotations ``annotation``,
docstrings ``docstring_match``, other strings ``string_match`` (code in f-string holes is code),
comments ``comment_match`` and every other identifier ``reference``. Positions are
(line 1-based, column 0-based in characters), as cq reports them.
"""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
from dataclasses import dataclass, field

Pos = tuple[int, int]


@dataclass
class FileLabels:
    """Every word occurrence the oracle could label, and the ones it could not."""

    labels: dict[Pos, str] = field(default_factory=dict)
    words: dict[Pos, str] = field(default_factory=dict)  # position -> the word there
    unsure: set[Pos] = field(default_factory=set)


def label_file(source: str, wanted: set[str]) -> FileLabels | None:
    """Labels of every occurrence (as a whole word) of the ``wanted`` names; None when the
    file does not parse (the oracle has no opinion there)."""
    try:
        tree = ast.parse(source)
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (SyntaxError, ValueError, tokenize.TokenError, RecursionError):
        return None
    lines = source.splitlines(keepends=True)
    walker = _Walker(lines, tokens)
    walker.visit(tree)
    out = FileLabels()
    word = re.compile(r"\b(" + "|".join(map(re.escape, sorted(wanted))) + r")\b")
    for tok in tokens:
        if tok.type == tokenize.NAME:
            if tok.string not in wanted:
                continue
            pos = tok.start
            out.words[pos] = tok.string
            label = walker.labels.get(pos) or walker.statement_label(pos)
            if label is None:
                out.unsure.add(pos)
            else:
                out.labels[pos] = walker.annotated(pos, label)
        elif tok.type in (tokenize.STRING, tokenize.COMMENT):
            _label_text(tok, word, walker, out)
    return out


def _label_text(tok: tokenize.TokenInfo, word: re.Pattern[str], walker: _Walker, out: FileLabels):
    if tok.type == tokenize.COMMENT:
        kind, holes = "comment_match", []
    else:
        kind = "docstring_match" if tok.start in walker.docstrings else "string_match"
        holes = _fstring_holes(tok.string)
    line, col = tok.start
    text = tok.string
    for m in word.finditer(text):
        before = text[: m.start()]
        nl = before.count("\n")
        pos = (line + nl, (col + len(before)) if nl == 0 else len(before) - before.rfind("\n") - 1)
        out.words[pos] = m.group()
        if any(a <= m.start() < b for a, b in holes):
            # Code, unless no node is there: a string nested in the hole or a format spec.
            label = walker.labels.get(pos)
            out.labels[pos] = kind if label is None else walker.annotated(pos, label)
        else:
            out.labels[pos] = kind


def _fstring_holes(literal: str) -> list[tuple[int, int]]:
    """Offsets of the ``{...}`` replacement fields of an f-string token (none otherwise)."""
    prefix = re.match(r"[A-Za-z]*", literal).group()
    if "f" not in prefix.lower():
        return []
    quote = literal[len(prefix) :][:3]
    quote = quote if quote in ('"""', "'''") else quote[0]
    i, end = len(prefix) + len(quote), len(literal) - len(quote)
    holes: list[tuple[int, int]] = []
    depth, start, in_str = 0, 0, None
    while i < end:
        ch = literal[i]
        if depth == 0:
            if literal.startswith("{{", i) or literal.startswith("}}", i):
                i += 2
                continue
            if ch == "{":
                depth, start = 1, i
        elif in_str:
            if ch == in_str:
                in_str = None
        elif ch in "'\"":
            in_str = ch
        elif ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
            if depth == 0:
                holes.append((start, i + 1))
        i += 1
    return holes


class _Walker(ast.NodeVisitor):
    """Collects a label per identifier position from the tree."""

    def __init__(self, lines: list[str], tokens: list[tokenize.TokenInfo]) -> None:
        self.lines = lines
        self.tokens = tokens
        self.token_starts = [t.start for t in tokens]
        self.labels: dict[Pos, str] = {}
        self.annotation_spans: list[tuple[Pos, Pos]] = []
        self.statement_spans: list[tuple[Pos, Pos, str]] = []
        self.docstrings: set[Pos] = set()
        self.callees: set[int] = set()
        self.decorators: set[int] = set()

    # positions -------------------------------------------------------------------------
    def char_col(self, line: int, byte_col: int) -> int:
        """ast columns are UTF-8 byte offsets; cq and tokenize count characters."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    def start(self, node: ast.AST) -> Pos:
        return node.lineno, self.char_col(node.lineno, node.col_offset)

    def end(self, node: ast.AST) -> Pos:
        return node.end_lineno, self.char_col(node.end_lineno, node.end_col_offset)

    def name_token_after(self, start: Pos, name: str, stop: Pos | None = None) -> Pos | None:
        for tok in self.tokens[bisect.bisect_left(self.token_starts, start) :]:
            if stop is not None and tok.start >= stop:
                return None
            if tok.type == tokenize.NAME and tok.string == name:
                return tok.start
        return None

    # results ---------------------------------------------------------------------------
    def annotated(self, pos: Pos, label: str) -> str:
        if any(a <= pos < b for a, b in self.annotation_spans):
            return "annotation"
        return label

    def statement_label(self, pos: Pos) -> str | None:
        """Names without their own node: import names, global/nonlocal names."""
        for a, b, label in self.statement_spans:
            if a <= pos < b:
                return label
        return None

    def put(self, pos: Pos | None, label: str) -> None:
        if pos is not None:
            self.labels.setdefault(pos, label)

    # nodes -----------------------------------------------------------------------------
    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store):
            label = "assignment"
        elif id(node) in self.callees or id(node) in self.decorators:
            label = "callsite"
        else:
            label = "reference"
        self.put(self.start(node), label)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        line, col = self.end(node)
        if isinstance(node.ctx, ast.Store):
            label = "assignment"
        elif id(node) in self.callees or id(node) in self.decorators:
            label = "callsite"
        else:
            label = "reference"
        self.put((line, col - len(node.attr)), label)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self.callees.add(id(node.func))
        self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> None:
        if node.arg is not None:
            self.put(self.start(node), "reference")
        self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> None:
        self.put(self.start(node), "assignment")
        if node.annotation is not None:
            self.annotation_spans.append((self.start(node.annotation), self.end(node.annotation)))
        self.generic_visit(node)

    def _definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        for deco in node.decorator_list:
            self.decorators.add(id(deco))
        self.put(self.name_token_after(self.start(node), node.name), "definition")
        returns = getattr(node, "returns", None)
        if returns is not None:
            self.annotation_spans.append((self.start(returns), self.end(returns)))
        self._docstring(node.body)
        self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _definition

    def visit_Module(self, node: ast.Module) -> None:
        self._docstring(node.body)
        self.generic_visit(node)

    def _docstring(self, body: list[ast.stmt]) -> None:
        first = body[0] if body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            a, b = self.start(first.value), self.end(first.value)
            self.docstrings.update(
                t.start for t in self.tokens if t.type == tokenize.STRING and a <= t.start < b
            )

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.annotation_spans.append((self.start(node.annotation), self.end(node.annotation)))
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.statement_spans.append((self.start(node), self.end(node), "import"))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.statement_spans.append((self.start(node), self.end(node), "from_import"))

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> None:
        self.statement_spans.append((self.start(node), self.end(node), "reference"))

    visit_Nonlocal = visit_Global

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name is not None:
            stop = self.start(node.body[0]) if node.body else None
            begin = self.end(node.type) if node.type is not None else self.start(node)
            self.put(self.name_token_after(begin, node.name, stop), "assignment")
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        self.generic_visit(node)  # the sub-pattern first: its names come before the capture
        if node.name is not None:
            begin = self.end(node.pattern) if node.pattern is not None else self.start(node)
            self.put(self.name_token_after(begin, node.name, self.end(node)), "assignment")

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name is not None:
            self.put(self.name_token_after(self.start(node), node.name), "assignment")

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        self.generic_visit(node)
        if node.rest is not None:
            begin = self.end(node.patterns[-1]) if node.patterns else self.start(node)
            self.put(self.name_token_after(begin, node.rest, self.end(node)), "assignment")

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        begin = self.end(node.cls)
        for name in node.kwd_attrs:
            pos = self.name_token_after(begin, name, self.end(node))
            self.put(pos, "reference")
            begin = pos or begin
        self.generic_visit(node)
