"""Work shared with a forked child by turns (``cq/forked.py``'s ``Turns``): every item is done
exactly once, by whichever process was free, and a child that fails leaves its items to the
caller. Real forks, real pipes."""

from __future__ import annotations

import os
import sys

import pytest

from cq.forked import Turns

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="cq forks helpers on Linux only")


def _work(item: int) -> bytes:
    """A little work, answered with the item and the process that did it."""
    sum(range(20_000))
    return f"{item}:{os.getpid()}".encode()


def test_every_item_is_done_once_by_one_side_or_the_other() -> None:
    turns = Turns.start(400, _work)
    assert turns is not None
    mine: list[int] = []
    while (item := turns.take()) is not None:  # this side works at its items as it takes them
        _work(item)
        mine.append(item)
    theirs = turns.finish()
    assert theirs is not None
    assert sorted([*theirs, *mine]) == list(range(400))
    assert not set(theirs) & set(mine)
    # The child took the first item (this side's first turn waited for it) and answered for
    # the items it took, from a process of its own.
    answers = [blob.decode().split(":") for blob in theirs.values()]
    assert 0 in theirs and [int(item) for item, _ in answers] == list(theirs)
    assert {pid for _, pid in answers} == {str(turns.helper.pid)}


def test_a_child_left_alone_does_every_item() -> None:
    turns = Turns.start(30, _work)
    assert turns is not None
    theirs = turns.finish()  # this side takes no turn
    assert theirs is not None and sorted(theirs) == list(range(30))


def test_a_child_that_fails_sends_nothing() -> None:
    def failing(item: int) -> bytes:
        raise RuntimeError(f"item {item} fails")

    turns = Turns.start(5, failing)
    assert turns is not None
    # None: the caller cannot tell which items the child took, so it does every item it did
    # not do itself (``cq.classify.pool``).
    assert turns.finish() is None


def test_the_child_takes_part_however_late_it_starts() -> None:
    # This side would take every item at once, with nothing to do for them, were its first
    # turn not to wait for the child's.
    for _ in range(20):
        turns = Turns.start(3, _work)
        assert turns is not None
        mine = []
        while (item := turns.take()) is not None:
            mine.append(item)
        theirs = turns.finish()
        assert theirs is not None and 0 in theirs and 0 not in mine


def test_more_items_than_a_pipe_holds_are_refused() -> None:
    assert Turns.start(Turns.MAX_ITEMS + 1, _work) is None
    assert Turns.start(0, _work) is None


def test_an_abandoned_child_is_gone() -> None:
    turns = Turns.start(50, lambda item: bytes(sum(range(10**6)) % 2))
    assert turns is not None
    pid = turns.helper.pid
    turns.abandon()
    with pytest.raises(ChildProcessError):  # killed and reaped: no such child any more
        os.waitpid(pid, os.WNOHANG)
    assert turns.take() is None
