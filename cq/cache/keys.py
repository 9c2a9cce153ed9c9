"""Text the cache's sqlite stores can key: a name that is not UTF-8 (its undecodable bytes
read as lone surrogates, ``os.fsdecode``) cannot be written, so a file is never stored by it
and a root is keyed by its bytes instead."""

from __future__ import annotations

import os


def storable(key: str) -> bool:
    """Whether sqlite can hold ``key``."""
    if key.isascii():
        return True
    try:
        key.encode()
    except UnicodeEncodeError:
        return False
    return True


def root_key(root: str) -> str:
    """A root's absolute path as text sqlite can hold: one that is not UTF-8 as its bytes in
    hex, a spelling no absolute path has."""
    return root if storable(root) else f"bytes:{os.fsencode(root).hex()}"
