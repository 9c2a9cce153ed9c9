"""The shown hits' ``symtable`` flags: a file whose flagged hits all sit in a def or class is
compiled as the top-level statements holding them (``cq.enrich.bindings``), and each hit
must get the flags the whole file's tables give it; a module-level hit, or a def or class
whose name the rest of the file defines again, reads the whole file's. Real compiles, real
files; the expected flags are the whole file's tables, read as before."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from cq.enrich.bindings import Bindings
from cq.enrich.symbols import flags_for, python_symbols
from cq.model import Finding
from cq.model.tuning import EnrichTuning
from cq.parse import Corpus

_SOURCE = '''"""A module whose methods read names bound around them."""
from __future__ import annotations

import os

LIMIT = 3
counter = 0


def outer(values: Sequence[int]) -> Callback:
    total = 0

    def inner(step: Step) -> int:
        nonlocal total
        total += step
        return total + LIMIT

    return inner


class Config:
    path: PathLike = os.sep

    def load(self, name: str) -> Mapping:
        global counter
        counter += 1
        return {name: self.path, "n": counter}

    @staticmethod
    def check(value):
        return [v for v in value if v is not None] or LIMIT


class Config:  # the same name again: its scopes' qualified names are the first's
    def load(self, other):
        return other


def tail():
    return outer(1)
'''


def _finding(rel: str, text: str, line: int, col: int, word: str, scope: str | None) -> Finding:
    return Finding(
        file=rel,
        line=line,
        col=col,
        end_col=col + len(word),
        text=word,
        line_text=text.splitlines()[line - 1],
        language="python",
        category="reference",
        confidence=0.9,
        containing_scope=scope,
    )


def _words(text: str, first: int, last: int, scope: str, rel: str) -> list[Finding]:
    """Every name on lines ``first``..``last`` (1-based), as hits in ``scope``."""
    lines = text.splitlines()
    return [
        _finding(rel, text, n, m.start(), m.group(), scope)
        for n in range(first, last + 1)
        for m in re.finditer(r"[A-Za-z_]\w*", lines[n - 1].split("#")[0])
    ]


def _flags(root: Path, shown: list[Finding]) -> tuple[list[object], list[str]]:
    """Each hit's flags, and the tables compiled for them (by ``table_key``: a table of some
    statements is ``digest@start-end,...``; a file's whole table is its digest)."""
    bindings = Bindings(Corpus(root, remember=False), shown, EnrichTuning(), use_cache=False)
    compiled = bindings.compile(list(bindings.missing()))
    out = bindings.attach(shown, compiled)  # adds a whole file's table it had to read
    return [f.symtable for f in out], sorted(compiled)


def _whole(text: str, shown: list[Finding]) -> list[object]:
    tables = python_symbols(text, "mod.py")
    return [flags_for(tables, f.containing_scope, f.text) for f in shown]


_ONCE = _SOURCE[: _SOURCE.index("class Config:  # the same")] + _SOURCE[_SOURCE.index("def tail") :]


def test_hits_in_defs_read_their_statements_and_get_the_whole_files_flags(
    tmp_path: Path,
) -> None:
    (tmp_path / "mod.py").write_text(_ONCE)
    shown = [
        *_words(_ONCE, 13, 16, "outer.inner", "mod.py"),  # nonlocal, free, a global
        *_words(_ONCE, 24, 27, "Config.load", "mod.py"),  # a global statement
        *_words(_ONCE, 29, 31, "Config.check", "mod.py"),
    ]
    flags, keys = _flags(tmp_path, shown)
    assert flags == _whole(_ONCE, shown)
    assert len(keys) == 1 and "@" in keys[0]  # the statements' table alone
    named = {(f.containing_scope, f.text): flag for f, flag in zip(shown, flags, strict=True)}
    total = named["outer.inner", "total"]
    assert total is not None and total.free and total.nonlocal_
    counter = named["Config.load", "counter"]
    assert counter is not None and counter.global_ and counter.assigned
    limit = named["outer.inner", "LIMIT"]
    assert limit is not None and limit.global_ and limit.referenced


def test_a_def_or_class_named_again_in_the_file_reads_the_whole_file(tmp_path: Path) -> None:
    """``Config`` is defined twice: the whole file's tables hold one of them under the
    qualified names both have, and the hits read those, as before (a table of the first
    one's statement alone would hold the other)."""
    (tmp_path / "mod.py").write_text(_SOURCE)
    shown = [
        *_words(_SOURCE, 14, 16, "outer.inner", "mod.py"),
        *_words(_SOURCE, 35, 36, "Config.load", "mod.py"),  # the second Config's
    ]
    flags, keys = _flags(tmp_path, shown)
    assert flags == _whole(_SOURCE, shown)
    # the whole file's "Config.load" is the first one's, where ``other`` is no name
    assert [f for f, h in zip(flags, shown, strict=True) if h.text == "other"] == [None, None]
    assert len(keys) == 2 and "@" in keys[1] and keys[0] == keys[1].partition("@")[0]


def test_an_annotation_only_name_reads_as_the_future_import_says(tmp_path: Path) -> None:
    """With ``from __future__ import annotations`` an annotation is not a use: compiled
    without that import, ``Step`` would be one in ``outer``."""
    (tmp_path / "mod.py").write_text(_ONCE)
    shown = _words(_ONCE, 11, 11, "outer", "mod.py")
    flags, keys = _flags(tmp_path, shown)
    assert flags == _whole(_ONCE, shown) and "@" in keys[0]
    without = _ONCE.replace("from __future__ import annotations\n", "")
    assert flags_for(python_symbols(without, "m.py"), "outer", "Step") is not None
    assert flags_for(python_symbols(_ONCE, "m.py"), "outer", "Step") is None


def test_a_module_level_hit_reads_the_whole_file(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text(_ONCE)
    shown = [*_words(_ONCE, 6, 7, "", "mod.py"), *_words(_ONCE, 14, 16, "outer.inner", "mod.py")]
    shown = [msgspec.structs.replace(f, containing_scope=f.containing_scope or None) for f in shown]
    flags, keys = _flags(tmp_path, shown)
    assert flags == _whole(_ONCE, shown)
    assert len(keys) == 1 and "@" not in keys[0]  # the whole file's table, by its digest
