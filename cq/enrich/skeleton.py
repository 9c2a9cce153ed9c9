"""A small stand-in module for LibCST: the hit's definitions verbatim, the rest as stubs.

LibCST with scope metadata costs in proportion to the source it is given (about a second for
a file of a thousand lines: bench/results/2026-11-29-figures-from-cq.md), so stage 4
never parses whole files. It parses a skeleton instead: the module, class and function bodies
on the path to the hit keep their header lines verbatim; every sibling statement that binds a
name used in the hit's innermost function (or statement) becomes a one-line stub of the same
kind (imports unparsed verbatim, ``def f(): ...``, ``class C: ...``, ``x = None``); other
siblings vanish. Scopes and bindings of the names the hit can see are preserved, so qualified
names, binding candidates and import alias chains come out as for the whole file, with line
numbers mapped back through ``line_map``. A compound statement holding the hit (``if``,
``try``, ``with``, a loop, ``match``; a def holding it in its header) keeps its header lines,
and of its other statements only their bindings, each at its own line (``_Builder.opened``).
"""

from __future__ import annotations

import ast
import re

import msgspec

from cq.parse.python_syntax import AST_DEFINITIONS, AST_FUNCTIONS, scope_nodes

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Skeleton(msgspec.Struct, frozen=True):
    """Skeleton source, original 1-based line of each of its lines, and the hit's row in it."""

    text: str
    line_map: tuple[int, ...]
    hit_row: int  # 1-based line of the hit inside ``text``


def build_skeleton(lines: list[str], tree: ast.Module, hit_line: int) -> Skeleton | None:
    """Skeleton of a module for a hit on ``hit_line`` (1-based); None outside any statement."""
    builder = _Builder(lines, hit_line)
    builder.names = _names_near_hit(lines, tree, hit_line)
    builder.hit_names = _names_of_hit_statement(lines, tree, hit_line)
    builder.block(tree.body, "")
    if hit_line not in builder.line_map:
        return None
    return Skeleton(
        text="".join(line + "\n" for line in builder.out),
        line_map=tuple(builder.line_map),
        hit_row=builder.line_map.index(hit_line) + 1,
    )


class _Builder:
    def __init__(self, lines: list[str], hit_line: int) -> None:
        self.lines, self.hit_line = lines, hit_line
        self.names: set[str] = set()
        # Inside an ``opened`` statement every binding keeps its own line (``reduced``), as
        # the statement verbatim has it; outside, a sibling's bindings are one ``stub``.
        self.exact = False
        # The names of the hit's own statement: LibCST's facts read the bindings of the
        # names it holds and no others, so an ``opened`` statement keeps those alone.
        self.hit_names: set[str] = set()
        self._hit_pattern: re.Pattern[str] | None = None
        self.out: list[str] = []
        self.line_map: list[int] = []

    def verbatim(self, first: int, last: int) -> None:
        for line in range(first, last + 1):
            self.out.append(self.lines[line - 1])
            self.line_map.append(line)

    def block(self, body: list[ast.stmt], indent: str) -> None:
        emitted = len(self.out)
        for stmt in body:
            if _first(stmt) <= self.hit_line <= _last(stmt):
                self.path(stmt)
            else:
                self.stub(stmt)
        if len(self.out) == emitted and body:
            self.out.append(indent + "pass")
            self.line_map.append(body[0].lineno)

    def path(self, stmt: ast.stmt) -> None:
        """A statement holding the hit: a def or class holding it in its body opens up as a
        block of stubs; any other compound statement (or a def holding it in its header, or
        any def inside an ``opened`` statement) is ``opened``; a simple one stays verbatim."""
        body = getattr(stmt, "body", None)
        if not _blocks(stmt):
            self.verbatim(_first(stmt), _last(stmt))
        elif (
            isinstance(stmt, AST_DEFINITIONS)
            and not self.exact
            and not self._shares_line(body[0])
            and self.hit_line >= _first(body[0])
        ):
            self.verbatim(_first(stmt), _first(body[0]) - 1)
            self.block(body, self._indent(body[0]))
        else:
            self.opened(stmt)

    def opened(self, stmt: ast.stmt) -> None:
        """A compound statement line by line: its header lines (``if``, ``elif``, ``except``,
        ``case``, a def's decorators and signature) verbatim, the statement holding the hit
        through ``path``, every other statement of its blocks ``reduced`` to the bindings of
        ``hit_names``, each at its own line as LibCST reads it in the verbatim text; a block left
        empty gets a ``pass``; blank and comment-only lines go, but the hit's. Scopes and
        bindings come out as from the statement verbatim, at a fraction of its size: a hit's
        statement was three quarters of a skeleton's bytes, and LibCST's time goes with the
        bytes (``bench.studies.skeleton_agreement``)."""
        self.exact = True
        blocks = _blocks(stmt)
        if any(self._shares_line(block[0]) for block in blocks):
            self.verbatim(_first(stmt), _last(stmt))  # ``if x: y`` has no line of its own
            return
        home = {id(child): index for index, block in enumerate(blocks) for child in block}
        starts: dict[int, list[ast.stmt]] = {}
        for block in blocks:
            for child in block:
                starts.setdefault(_first(child), []).append(child)
        emitted = [0] * len(blocks)
        order = sorted(starts)  # the lines statements start on
        following = 0  # the next of ``order`` not yet read
        line, last = _first(stmt), _last(stmt)
        while line <= last:
            if following == len(order) or order[following] != line:
                if line == self.hit_line or _is_code(self.lines[line - 1]):
                    self.verbatim(line, line)
                line += 1
                continue
            group = starts[order[following]]
            following += 1
            end = max(_last(child) for child in group)
            # ``x = f(\n  a); y = 1``: a statement starting on another's last line joins it
            while following < len(order) and order[following] <= end:
                group = group + starts[order[following]]
                following += 1
                end = max(_last(child) for child in group)
            before = len(self.out)
            if any(_first(c) <= self.hit_line <= _last(c) for c in group):
                if len(group) == 1:
                    self.path(group[0])
                else:
                    self.verbatim(line, end)  # statements sharing a line: one is the hit's
            else:
                for child in group:
                    self.reduced(child)
            for child in group:
                index = home[id(child)]
                emitted[index] += len(self.out) - before
                before = len(self.out)
                if child is blocks[index][-1] and not emitted[index]:
                    self.out.append(self._indent(blocks[index][0]) + "pass")
                    self.line_map.append(blocks[index][0].lineno)
            line = end + 1

    def reduced(self, stmt: ast.stmt) -> None:
        """A statement off the hit's path as its bindings of ``hit_names``: an import, a
        ``global``/``nonlocal``, a def or class as its ``_one_line`` stub, a compound statement
        ``opened`` (its header binds: a loop's target, ``as`` names), an assignment as
        ``name = None`` at each bound name's line; a statement whose bindings a comprehension
        or lambda may hold stays verbatim, one binding none of them goes."""
        if (
            not self._mentions_hit_name(stmt)
            or not _bound_names(stmt, exactly=True) & self.hit_names
        ):
            return
        indent = self._indent(stmt)
        if (line := _one_line(stmt)) is not None:
            self.out.append(indent + line)
            self.line_map.append(stmt.lineno)
        elif _blocks(stmt):
            self.opened(stmt)
        elif any(isinstance(n, _INNER_SCOPES) for n in ast.walk(stmt)):
            self.verbatim(_first(stmt), _last(stmt))
        else:
            stores = {
                (node.lineno, node.id)
                for node in ast.walk(stmt)
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
            }
            for line, name in sorted(stores):
                if name in self.hit_names:
                    self.out.append(f"{indent}{name} = None")
                    self.line_map.append(line)

    def stub(self, stmt: ast.stmt) -> None:
        bound = _bound_names(stmt) & self.names
        if not bound:
            return
        indent = self._indent(stmt)
        if (line := _one_line(stmt)) is not None:
            texts = [line]
        else:
            imports = [n for n in scope_nodes([stmt]) if isinstance(n, ast.Import | ast.ImportFrom)]
            texts = [ast.unparse(n) for n in imports if _bound_names(n) & bound]
            bound -= {name for n in imports for name in _bound_names(n)}
            texts += [f"{name} = None" for name in sorted(bound)]
        for text in texts:
            self.out.append(indent + text)
            self.line_map.append(stmt.lineno)

    def _mentions_hit_name(self, stmt: ast.stmt) -> bool:
        """Whether the statement's text holds one of ``hit_names`` (a cheap test before its
        bindings are read: a block of thousands of statements is read for each hit in it)."""
        if self._hit_pattern is None:
            words = "|".join(sorted(map(re.escape, self.hit_names))) or "(?!)"
            self._hit_pattern = re.compile(rf"\b(?:{words})\b")
        search = self._hit_pattern.search
        return any(search(line) for line in self.lines[_first(stmt) - 1 : _last(stmt)])

    def _indent(self, stmt: ast.stmt) -> str:
        line = self.lines[stmt.lineno - 1]
        return line[: len(line) - len(line.lstrip())]

    def _shares_line(self, stmt: ast.stmt) -> bool:
        """A body statement that starts on its header's line (``def f(): return 1``)."""
        prefix = self.lines[stmt.lineno - 1].encode("utf-8")[: stmt.col_offset]
        return bool(prefix.strip())


def _names_near_hit(lines: list[str], tree: ast.Module, hit_line: int) -> set[str]:
    """Identifiers in the hit's innermost function, or its innermost statement."""
    path: list[ast.stmt] = []
    body: list[ast.stmt] = tree.body
    while body:
        stmt = next((s for s in body if _first(s) <= hit_line <= _last(s)), None)
        if stmt is None:
            break
        path.append(stmt)
        body = [s for s in getattr(stmt, "body", None) or [] if isinstance(s, ast.stmt)]
    funcs = [s for s in path if isinstance(s, AST_FUNCTIONS)]
    holder = funcs[-1] if funcs else (path[-1] if path else None)
    if holder is None:
        return set()
    text = "\n".join(lines[_first(holder) - 1 : _last(holder)])
    return set(_IDENT.findall(text))


def _names_of_hit_statement(lines: list[str], tree: ast.Module, hit_line: int) -> set[str]:
    """Identifiers of the innermost statement holding the hit: a simple statement's lines, or
    of a compound statement holding it outside its blocks (a header, a comment between
    statements) the lines none of its statements cover."""
    holder: ast.stmt | None = None
    body: list[ast.stmt] = tree.body
    while (stmt := next((s for s in body if _first(s) <= hit_line <= _last(s)), None)) is not None:
        holder = stmt
        body = [child for block in _blocks(stmt) for child in block]
    if holder is None:
        return set()
    covered = {n for child in body for n in range(_first(child), _last(child) + 1)}
    rows = range(_first(holder), _last(holder) + 1)
    text = "\n".join(lines[n - 1] for n in rows if n not in covered)
    return set(_IDENT.findall(text))


def _bound_names(stmt: ast.stmt, *, exactly: bool = False) -> set[str]:
    """Names a statement binds in the scope it sits in (not inside nested scopes): stored
    names, import and def names, its own ``global``/``nonlocal`` names. ``exactly``: also
    where else LibCST records an assignment, a nested ``global``/``nonlocal`` and an
    ``except ... as`` name (a comprehension's or lambda's stored names are counted too:
    over-counting only keeps a statement)."""
    names: set[str] = set()
    for node in scope_nodes([stmt]):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, AST_DEFINITIONS):
            names.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal) and (exactly or node is stmt):
            names.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name and exactly:
            names.add(node.name)
    return names


def _one_line(stmt: ast.stmt) -> str | None:
    """The one line that stands for an import, a ``global``/``nonlocal`` (unparsed), a def
    or a class (an empty one of its name); None for any other statement."""
    if isinstance(stmt, ast.Import | ast.ImportFrom | ast.Global | ast.Nonlocal):
        return ast.unparse(stmt)
    if isinstance(stmt, ast.ClassDef):
        return f"class {stmt.name}: ..."
    if isinstance(stmt, AST_FUNCTIONS):
        return f"def {stmt.name}(): ..."
    return None


# Expressions with a scope of their own, whose bindings a line-by-line stub could misplace.
_INNER_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement blocks of a compound statement, in source order; none for a simple one."""
    blocks = [getattr(stmt, field, None) for field in ("body", "orelse", "finalbody")]
    blocks += [h.body for h in getattr(stmt, "handlers", None) or ()]
    blocks += [c.body for c in getattr(stmt, "cases", None) or ()]
    found = [b for b in blocks if isinstance(b, list) and b and isinstance(b[0], ast.stmt)]
    return sorted(found, key=lambda block: _first(block[0]))


def _is_code(line: str) -> bool:
    """Not blank, not only a comment: a header line of a compound statement."""
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _first(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None) or []
    return min([stmt.lineno, *(d.lineno for d in decorators)])


def _last(stmt: ast.stmt) -> int:
    return stmt.end_lineno or stmt.lineno
