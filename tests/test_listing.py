"""The tree's file list as rg gives it, and the size check that stops rg once it is answered:
real rg on real trees."""

from __future__ import annotations

from pathlib import Path

import pytest

from cq.parse import Listing, list_tree, list_tree_until
from tests.conftest import write_tree

TREE = {f"pkg{d}/mod{i}.py": f"VALUE_{d}_{i} = {i}\n" for d in range(6) for i in range(50)}


def test_a_listing_stopped_by_its_caller_hands_over_no_more_files(tmp_path: Path) -> None:
    """The index's check of a first build's size stops rg once the files seen hold more than
    a search indexes itself; nothing past that file is stat'ed, and nothing is returned."""
    root = write_tree(tmp_path / "repo", {**TREE, "README.md": "not listed\n"})
    seen: list[str] = []

    def enough(name: str) -> bool:
        seen.append(name)
        return len(seen) == 40

    assert list_tree_until(root, enough) is None
    assert len(seen) == 40 and set(seen) <= set(TREE)


def test_a_listing_run_to_its_end_is_the_sorted_list_every_stage_shares(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {**TREE, "notes.txt": "not listed\n"})
    seen: list[str] = []
    listed = list_tree_until(root, lambda name: seen.append(name) is not None)
    assert listed == list_tree(root) == tuple(sorted(TREE))
    assert sorted(seen) == sorted(TREE)


def test_a_shared_listing_stopped_early_lists_again_for_the_next_asker(tmp_path: Path) -> None:
    """A stopped listing is not kept as if it were whole: the vocabulary or the semantic stage
    asking next gets every file; a whole one is kept and handed to the next check as is."""
    root = write_tree(tmp_path / "repo", TREE)
    listing = Listing(root)
    assert listing.files_until(lambda name: True) is None
    assert listing.files() == tuple(sorted(TREE))
    seen: list[str] = []
    assert listing.files_until(lambda name: seen.append(name) is not None) == listing.files()
    assert seen == sorted(TREE)
    assert listing.files_until(lambda name: name.startswith("pkg3/")) is None


def test_a_tree_rg_cannot_list_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        list_tree_until(tmp_path / "gone", lambda name: False)
