"""Installed versions of the parser wheels, for cache keys, without ``importlib.metadata``.

``importlib.metadata`` costs a process a visible part of a warm search (it imports
``email`` and parses METADATA; its cost: bench/results/2026-11-29-figures-from-cq.md);
a version is already in the ``<name>-<version>.dist-info`` directory name, found the same
way: the first ``sys.path`` entry that has one wins.
"""

from __future__ import annotations

import os
import re
import sys
from functools import cache

_DIST_INFO = re.compile(r"(?P<name>[^-]+)-(?P<version>[^-]+)\.dist-info")


def _normalized(name: str) -> str:
    """PEP 503 normalisation, which also equates ``tree-sitter`` and ``tree_sitter``."""
    return re.sub(r"[-_.]+", "-", name).lower()


@cache
def _installed() -> dict[str, str]:
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for name in names:
            match = _DIST_INFO.fullmatch(name)
            if match:
                found.setdefault(_normalized(match["name"]), match["version"])
    return found


def installed_versions() -> dict[str, str]:
    """Every installed wheel's version, by normalised name."""
    return dict(_installed())


def dist_version(dist: str) -> str:
    """The installed version of ``dist``, or ``?`` when it is not installed as a wheel."""
    return _installed().get(_normalized(dist), "?")
