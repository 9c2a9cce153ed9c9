"""Files an issue text points at: the ones it names and the ones defining names it writes.

In: the rewriter's reading of the text (``cq.rewrite.extract_mentions``: traceback frames,
paths, dotted module names, names in code) and the index's files. Out: ``Mention``s,
strongest first. These are the most precise words an issue has (a traceback frame
``File ".../site-packages/pkg/trainer.py", line 500`` names the file that raised), and BM25
over a bag of words dilutes them among hundreds of others.

A mentioned path is read from its end: its file name must be one of the tree's, and a path
of several parts must match at least two (``/usr/lib/python3.8/site-packages/pkg/a.py``
matches ``src/pkg/a.py`` on two; ``self/trainer.py``, read from ``self.trainer``, matches
nothing). A name written as code (``Trainer``, ``val_dataloader``) points at the files that
define a unit of that name. Either is kept when it picks out at most
``index.mention_max_files`` files (``cq/model/index_tuning.py``, with the weights): a
bare ``utils.py`` in a tree of ten ``utils.py``, or ``forward`` defined in fifty models,
says nothing.

A Python text's title (its first line) may name a file by its name alone: "nan when training
Alexnet" (``examples/ImageNetModels/alexnet.py``), "Running Cycle GAN" (``CycleGAN.py``),
"RandomAffine" (``random_affine.py``). A word of the title, or two or three adjacent words
joined, that spells the name of at most ``index.stem_max_files`` files (case and
underscores ignored; ``__init__.py`` is a package, not a name, and the project's own name
would point at it) points at those files with ``index.mention_name``'s weight (half a path's:
after the paths, ahead of them when a path names the file too).

Paths are read against one language's files: a Python question's ``.py`` files, a Rust
question's ``.rs`` files (rustc's ``--> src/x.rs:12:5``, a panic's ``src/x.rs:12:5``, a path
in the prose, a GitHub file link). A Rust path that is only a crate root (``src/lib.rs``,
``src/main.rs``) is not read: every crate has one, and rustc prints the reporter's own
crate's paths (on rust_tuning 123 such bare roots named this repository's root 1 time in 5).
Definitions are Python's only (on Rust texts they were tried and dropped:
bench/results/rust-accuracy.md).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable

import msgspec

from cq.model import Language
from cq.model.index_tuning import IndexTuning
from cq.model.language import is_python_module, is_rust
from cq.rewrite import FileTable, Mentions, mentioned_parts, split_dotted


class Definition(msgspec.Struct, frozen=True, kw_only=True):
    """A unit defining a name: where a file found by its definition is shown."""

    path: str
    qualname: str
    line: int
    kind: str


class Mention(msgspec.Struct, frozen=True, kw_only=True):
    """A file the text points at, its summed weight and how it was first pointed at (a
    definition: the first defining unit of the file)."""

    path: str
    weight: float
    how: str  # traceback | path | name | definition
    unit: Definition | None = None


CRATE_ROOTS = frozenset({("src", "lib.rs"), ("src", "main.rs")})


def named_files(
    mentions: Mentions, paths: Iterable[str], tuning: IndexTuning, language: Language = "python"
) -> list[Mention]:
    """Files the text names in traceback frames (innermost first, ``mention_frame``) and
    paths or modules (``mention_path``), among ``paths`` of ``language``."""
    keep = is_rust if language == "rust" else is_python_module
    table = FileTable(p for p in paths if keep(p))
    found: dict[str, Mention] = {}
    for path, weight, how in (
        *((p, tuning.mention_frame, "traceback") for p in reversed(mentions.frame_paths)),
        *((p, tuning.mention_path, "path") for p in mentions.paths),
    ):
        parts = mentioned_parts(path)
        files = table.resolve_parts(parts) if parts not in CRATE_ROOTS else []
        if not files or len(files) > tuning.mention_max_files:
            continue
        for f in files:
            old = found.get(f)
            add = weight / len(files)
            found[f] = (
                Mention(path=f, weight=add, how=how)
                if old is None
                else msgspec.structs.replace(old, weight=old.weight + add)
            )
    return _ranked(found)


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def files_named_by_words(
    line: str,
    paths: Iterable[str],
    keep: Callable[[str], bool],
    tuning: IndexTuning,
) -> list[Mention]:
    """Files whose name (``.py`` dropped, case and ``_`` ignored) a word of ``line`` spells,
    or two or three adjacent words joined, among the files ``keep`` accepts (asked of
    the matching files only); a name shared by more than ``stem_max_files`` of them,
    ``__init__.py`` and words shorter than ``stem_min_len`` are not read."""
    words = [w.lower().replace("_", "") for w in _WORD.findall(line)]
    joined = ["".join(words[i : i + n]) for n in (2, 3) for i in range(len(words) - n + 1)]
    wanted = [w for w in dict.fromkeys([*words, *joined]) if len(w) >= tuning.stem_min_len]
    keys = {f"{w}.py" for w in wanted}
    by_stem: dict[str, list[str]] = defaultdict(list)
    for p in paths:
        name = p[p.rfind("/") + 1 :].lower().replace("_", "")
        if name in keys and not p.endswith("__init__.py"):
            by_stem[name[:-3]].append(p)
    found: dict[str, Mention] = {}
    for word in wanted:
        files = [f for f in by_stem.get(word, ()) if keep(f)]
        if 0 < len(files) <= tuning.stem_max_files:
            weight = tuning.mention_name / len(files)
            for f in files:
                found.setdefault(f, Mention(path=f, weight=weight, how="name"))
    return list(found.values())


def merged(*lists: list[Mention]) -> list[Mention]:
    """One list: a file pointed at more than once has the sum of its weights (and its first
    ``how``), strongest first."""
    found: dict[str, Mention] = {}
    for m in (m for ms in lists for m in ms):
        old = found.get(m.path)
        found[m.path] = (
            m if old is None else msgspec.structs.replace(old, weight=old.weight + m.weight)
        )
    return _ranked(found)


def code_names(mentions: Mentions) -> list[str]:
    """The names the text writes as code (last parts of dotted names), first seen first."""
    names = (*mentions.frame_functions, *mentions.code_names, *mentions.prose_names)
    return list(dict.fromkeys(split_dotted(n)[-1] for n in names if n))


def defining_files(
    names: list[str], definitions: dict[str, list[Definition]], max_files: int
) -> list[Mention]:
    """Files defining a name the text writes as code, when at most ``max_files`` do: the
    definition, not the many files that merely use the name."""
    found: dict[str, Mention] = {}
    for name in names:
        units: dict[str, Definition] = {}
        for d in definitions.get(name, ()):
            units.setdefault(d.path, d)
        if not 0 < len(units) <= max_files:
            continue
        for f in sorted(units):
            old = found.get(f)
            add = 1.0 / len(units)
            found[f] = (
                Mention(path=f, weight=add, how="definition", unit=units[f])
                if old is None
                else msgspec.structs.replace(old, weight=old.weight + add)
            )
    return _ranked(found)


def _ranked(found: dict[str, Mention]) -> list[Mention]:
    """By weight; ties keep the order in which the text pointed at them."""
    order = {p: i for i, p in enumerate(found)}
    return sorted(found.values(), key=lambda m: (-m.weight, order[m.path]))
