"""A search process's warm-up: the parsers a search may need are imported before it comes, and
LibCST, whose import holds the interpreter longest, only once no search has come for a while
(a search that came at once would share the interpreter with it). Run in a fresh interpreter:
this one has imported them all already."""

from __future__ import annotations

import subprocess
import sys

WARM_UP = """
import sys, threading, time
from cq.server import warm

warm._QUIET_S = float(sys.argv[1])
searching = threading.Event()
thread = threading.Thread(target=warm._warm_up, args=(searching,))
thread.start()
if sys.argv[2] == "search":
    while "tree_sitter_rust" not in sys.modules and thread.is_alive():
        time.sleep(0.001)
    searching.set()
thread.join()
print(" ".join(m for m in warm._HEAVY_MODULES if m in sys.modules))
"""


def _printed(script: str, quiet_s: float, event: str) -> str:
    """What ``script`` prints in a fresh interpreter, given the quiet time and the event."""
    done = subprocess.run(
        [sys.executable, "-c", script, str(quiet_s), event],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


def _warmed(quiet_s: float, event: str) -> list[str]:
    return _printed(WARM_UP, quiet_s, event).split()


def test_an_idle_search_process_has_every_parser_imported() -> None:
    assert _warmed(0.01, "idle") == [
        "ast_grep_py",
        "tree_sitter_python",
        "tree_sitter_rust",
        "libcst",
    ]


def test_a_search_that_comes_at_once_leaves_libcst_to_a_quiet_moment() -> None:
    assert _warmed(60.0, "search") == ["ast_grep_py", "tree_sitter_python", "tree_sitter_rust"]


QUIET = """
import gc, sys, threading, weakref
from cq.server import warm

warm._QUIET_S = float(sys.argv[1])
gc.set_threshold(700, 10, warm._NO_FULL_COLLECTIONS)
class Node:
    pass
node = Node()
node.me = node  # a cycle: only the collector frees it
gone = weakref.ref(node)
gc.collect(1)
gc.collect(1)  # in the oldest generation now, where only a full collection looks
del node
searching = threading.Event()
if sys.argv[2] == "search":
    searching.set()
warm._when_quiet(searching)
print("freed" if gone() is None else "kept")
"""


def _quiet(quiet_s: float, event: str) -> str:
    return _printed(QUIET, quiet_s, event)


def test_a_pause_between_searches_collects_what_they_left() -> None:
    """Full collections never run during a search (they walk everything a search process keeps
    between searches); the garbage in the oldest generation goes once searches pause."""
    assert _quiet(0.01, "idle") == "freed"


def test_a_search_that_comes_first_puts_off_the_collection() -> None:
    assert _quiet(0.01, "search") == "kept"
