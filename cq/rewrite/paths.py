"""Which repository files a text points at: traceback frames, printed and imported paths,
module and package names in the prose, and the files defining the names it mentions.

Pure functions over the vocabulary's file list: the offline rewriter turns them into path
hints (a ranking signal) and fixed-string patterns (the source lines of the frames).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from cq.model import Pattern
from cq.model.tuning import RewriteTuning
from cq.rewrite.extract import Mentions
from cq.rewrite.vocabulary import Vocabulary
from cq.rewrite.words import GENERIC_WORDS, STOP_WORDS, words

_DRIVE = re.compile(r"^[A-Za-z]:")


def frame_literals(
    mentions: Mentions, vocabulary: Vocabulary, source: str, t: RewriteTuning
) -> list[Pattern]:
    """The source lines of the innermost frames in this repository, as fixed strings."""
    resolve = _resolver(vocabulary.files)
    ours = [line for path, line in mentions.frame_lines if resolve(path)]
    innermost = list(dict.fromkeys(reversed(ours)))[:2]
    return [
        Pattern(
            text=line,
            kind="literal",
            source=source,
            weight=(t.frame_line, t.frame_line_next)[depth],
        )
        for depth, line in enumerate(innermost)
    ]


def frames_in_tree(mentions: Mentions, files: tuple[str, ...]) -> bool:
    """Some traceback frame or printed location of the text names a file of the tree."""
    resolve = _resolver(files)
    return any(resolve(path) for path in mentions.frame_paths)


def path_hints(
    mentions: Mentions,
    vocabulary: Vocabulary,
    names: tuple[str, ...],
    modules: dict[str, float],
    t: RewriteTuning,
) -> dict[str, float]:
    """Repository files the text points at: traceback and import paths, stems it names."""
    hints: dict[str, float] = dict(modules)
    resolve = _resolver(vocabulary.files)
    for depth, path in enumerate(reversed(mentions.frame_paths)):
        for rel in resolve(path):
            weight = (t.hint_frame, t.hint_frame_next)[depth] if depth < 2 else t.hint_frame_far
            hints[rel] = max(hints.get(rel, 0.0), weight)
    for path in mentions.paths:
        for rel in resolve(path):
            hints[rel] = max(hints.get(rel, 0.0), t.hint_path)
    stems = _stem_index(vocabulary.files)
    for name in names:
        for rel in stems.get(name.lower(), ()):
            hints[rel] = max(hints.get(rel, 0.0), t.hint_stem)
    return dict(sorted(hints.items()))


def module_hints(prose: str, vocabulary: Vocabulary, t: RewriteTuning) -> dict[str, float]:
    """Files a prose word names as a module, as explicit as a traceback frame (1.0: "the
    tarfile module", "json encoder"), or as their package (0.3: "logging" ->
    ``logging/handlers.py``)."""
    stems = _stem_index(vocabulary.files)
    packages = _package_index(vocabulary.files, t.max_package_files)
    hints: dict[str, float] = {}
    for word in sorted(_module_words(prose)):
        for rel in packages.get(word, ()):
            hints[rel] = max(hints.get(rel, 0.0), t.hint_package)
        for rel in stems.get(word, ()):
            hints[rel] = t.hint_module
    return hints


def _module_words(prose: str) -> set[str]:
    """Prose words that can name a module or package: not stop or generic words."""
    lowered = {w.lower() for w in words(prose)}
    return {w for w in lowered if len(w) >= 4 and w not in STOP_WORDS and w not in GENERIC_WORDS}


def _package_index(files: tuple[str, ...], most_files: int) -> dict[str, list[str]]:
    """Directory name -> the files directly inside it, for small packages only: naming the
    project's own top-level package (in every issue about it) points at nothing."""
    index: dict[str, list[str]] = {}
    for rel in files:
        parts = rel.split("/")
        if len(parts) > 1:
            index.setdefault(parts[-2].lower(), []).append(rel)
    most = min(most_files, max(1, len(files) // 20))
    return {name: rels for name, rels in index.items() if len(rels) <= most}


def _suffix_index(files: Iterable[str]) -> dict[str, list[str]]:
    index: dict[str, list[str]] = {}
    for rel in files:
        index.setdefault(rel.rsplit("/", 1)[-1], []).append(rel)
    return index


def mentioned_parts(path: str) -> tuple[str, ...]:
    """A mentioned path's parts: ``\\`` read as ``/``, a drive letter, ``.`` and empty parts
    dropped."""
    clean = _DRIVE.sub("", path.replace("\\", "/"))
    return tuple(p for p in clean.split("/") if p not in ("", "."))


class FileTable:
    """The one reader of which repository files a mentioned path denotes (the rewriter's
    path hints, the index's named files): the files sharing the longest run of trailing
    parts with it, at least two of a path with several (``self/trainer.py``, read from
    ``self.trainer``, names no ``pkg/trainer.py``); a bare file name, every file of that
    name.

    A path of two or more parts can only share two with files in the same directory name,
    so those are looked up by (directory, basename) instead of scanning every file of the
    basename: 6,000 mentioned ``x/__init__.py`` took 11 s on the stdlib's 3,081 of them.
    """

    def __init__(self, files: Iterable[str]) -> None:
        self.by_basename = _suffix_index(files)
        self._by_directory: dict[str, dict[str, list[str]]] = {}  # basename -> dir -> files

    def resolve(self, path: str) -> list[str]:
        return self.resolve_parts(mentioned_parts(path))

    def resolve_parts(self, parts: tuple[str, ...]) -> list[str]:
        if not parts:
            return []
        if len(parts) == 1:
            return list(self.by_basename.get(parts[-1], ()))
        paired = self._in_directory(parts[-1]).get(parts[-2], [])
        scored = [(_shared_suffix(parts, rel.split("/")), rel) for rel in paired]
        best = max((s for s, _ in scored), default=0)
        return [rel for s, rel in scored if s == best and s >= 2]

    def _in_directory(self, basename: str) -> dict[str, list[str]]:
        if basename not in self._by_directory:
            index: dict[str, list[str]] = {}
            for rel in self.by_basename.get(basename, []):
                parts = rel.split("/")
                if len(parts) > 1:
                    index.setdefault(parts[-2], []).append(rel)
            self._by_directory[basename] = index
        return self._by_directory[basename]


def _resolver(files: tuple[str, ...]) -> Callable[[str], list[str]]:
    """``FileTable.resolve`` as the rewriter reads a path: a bare file name only when one
    file has it."""
    table = FileTable(files)

    def resolve(path: str) -> list[str]:
        parts = mentioned_parts(path)
        found = table.resolve_parts(parts)
        return found if len(parts) > 1 or len(found) == 1 else []

    return resolve


def _shared_suffix(a: tuple[str, ...], b: list[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def _stem_index(files: tuple[str, ...]) -> dict[str, list[str]]:
    index: dict[str, list[str]] = {}
    for rel in files:
        base = rel.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
        if base not in ("__init__", "mod", "lib", "main", "__main__", "conftest"):
            index.setdefault(base, []).append(rel)
    return index
