"""Looking names up by word when asked (``NameWords``) finds exactly the names, in the order,
that an index of every name by its stemmed subwords would list: the rewriter and did-you-mean
see the same names as before, without a first search paying for the index."""

from __future__ import annotations

import sysconfig
from collections import defaultdict
from pathlib import Path

import pytest

from cq.rewrite.names_by_word import NameWords
from cq.rewrite.vocabulary import load_vocabulary
from cq.rewrite.words import IRREGULAR_FORMS, stem, subwords

# Names that stress the lookup: irregular forms ("kept", "rebuilt"), "ies" -> "y", doubled
# letters, digits (an Arabic-Indic one too), letters outside ASCII (a Kelvin sign, which
# ``str.lower`` turns into "k"), one-letter pieces and names that are only underscores.
TRICKY = [
    "kept_items",
    "KeptItems",
    "ReBuilt",
    "rebuilt_index",
    "heldLocks",
    "frozen_set",
    "getLibraries",
    "policies",
    "Policy",
    "mapping_proxy",
    "map_it",
    "parse_HTTPHeader2",
    "HTTPServer",
    "x\u0661y",
    "\u212aelvin_scale",
    "Kelvin_scale",
    "Tar\u212aFile",
    "\u0130stanbul",
    "_",
    "__init__",
    "a_b",
    "normalization",
    "normalize_all",
    "TarFile",
    "tar_files",
    "written_by",
    "WriteBack",
]


def _reference(names: list[str]) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """The index the lookups stand for: every name under each stem of its subwords (two
    letters or more), and names of two subwords or more under the stem of them joined."""
    containing: dict[str, list[int]] = defaultdict(list)
    spelled: dict[str, list[int]] = defaultdict(list)
    for position, name in enumerate(names):
        pieces = subwords(name)
        for word_stem in sorted({stem(p) for p in pieces if len(p) >= 2}):
            containing[word_stem].append(position)
        if len(pieces) > 1:
            spelled[stem("".join(pieces))].append(position)
    return containing, spelled


def _check(names: list[str], spelled_sample: int | None = None) -> None:
    containing, spelled = _reference(names)
    words = NameWords(names)
    for word_stem, positions in containing.items():
        assert words.containing(word_stem) == tuple(positions), word_stem
    for word_stem, positions in sorted(spelled.items())[:spelled_sample]:
        assert words.spelled(word_stem) == tuple(positions), word_stem
    for absent in ("zzqx", "y", ""):
        assert words.containing(absent) == tuple(containing.get(absent, ()))
        assert words.spelled(absent) == tuple(spelled.get(absent, ()))


def test_tricky_names_are_found_as_an_index_finds_them() -> None:
    _check(sorted(TRICKY))


def test_irregular_forms_are_found_under_their_base() -> None:
    words = NameWords(sorted(TRICKY))
    keep = {words.names[p] for p in words.containing(stem("keep"))}
    assert keep == {"KeptItems", "kept_items"}
    built = {words.names[p] for p in words.spelled(stem("build"))}
    assert built == {"ReBuilt"}  # "rebuilt" written as one word; rebuilt_index is three
    assert {words.names[p] for p in words.containing(stem("library"))} == {"getLibraries"}


def test_every_irregular_form_as_a_name() -> None:
    names = sorted({*IRREGULAR_FORMS, *(f"{form}_value" for form in IRREGULAR_FORMS)})
    _check(names)


@pytest.mark.parametrize("package", ["json", "email", "asyncio"])
def test_a_real_vocabulary_is_found_as_an_index_finds_it(package: str) -> None:
    root = Path(sysconfig.get_paths()["stdlib"]) / package
    names = list(load_vocabulary(root, use_cache=False).names)
    assert len(names) > 30
    _check(names, spelled_sample=400)
