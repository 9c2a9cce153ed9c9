"""Pyrefly's answers kept in cq's payload cache, keyed by content, so that a search shows them
without asking again and an edit elsewhere in the tree keeps the answers it cannot change.

What an answer's key covers:

- the hit: its file, that file's content digest, line, column, category and text;
- the server: the Pyrefly binary (path, size, mtime: a new version answers differently) and
  whether it builds the workspace index (reference counts);
- cq's code that turns answers into facts (``PayloadCache`` namespaces it).

What an answer names is checked when it is read (``KnownAnswer.depends``): the files of the
root it points to (the definition's file, the files holding the counted references) with
their digests when it was asked; a search takes the answer only while each of those files
still has that digest (``stage.py``). So an edit of the called function's file asks its
callsites again, and an agent's edit of an unrelated file keeps every answer. What a key
does not see: a change in a module the hit's file imports without naming it in the answer (a
type alias defined two imports away), a reference added in a file that held none, and files
outside the root (site-packages): answered again when the hit's file changes.

An answer is kept in two steps, each when it is done (``asking.Batch``): first the type and
the definition (and cq's syntax reading of a callsite), as soon as Pyrefly has checked the
hit's file, marked ``complete`` False (status ``degraded``, its reason saying the reference
count and errors are still being asked); then the complete answer in its place (status
``applied``: hover, definition, references after indexing, and diagnostics after indexing
all came; or ``degraded`` for a reason that is not the clock: a request Pyrefly answered with
an error). The definitions of the two steps are the same answers (the second step asks no
definition again), so a search that orders by definitions (``ranking.py``) orders the same
from the first step on; only the reference counts and errors are added later. An answer the
clock cut is never kept. A search shows what the cache holds when it looks, and no other
answer, so the same cache gives the same report; a hit not in it is ``pending`` until a
long-lived cq's background batch, or a search told to wait, stores its answer.
"""

from __future__ import annotations

import hashlib
import os

import msgspec

from cq.cache.payloads import PayloadCache
from cq.model import Finding, SemanticFacts

_BUILDERS = ("cq.semantic.stage",)


class KnownAnswer(msgspec.Struct, frozen=True):
    """A hit's facts and the files of the root they name, each with its digest then.
    ``complete`` False: a first answer (type, definition), its reference count and errors
    still being asked (``asking.Batch.first``)."""

    facts: SemanticFacts
    depends: tuple[tuple[str, str], ...] = ()
    complete: bool = True


class AnswerMemo:
    """The answer cache as one search uses it (off with ``enabled`` False: keys are None)."""

    def __init__(self, binary: str | None, *, enabled: bool, indexing: bool) -> None:
        self.enabled = enabled and binary is not None
        self.server = _server_identity(binary, indexing) if self.enabled and binary else None
        self._cache: PayloadCache[KnownAnswer] | None = None
        if self.server is None:
            self.enabled = False

    def key(self, finding: Finding, digest: str) -> str | None:
        if self.server is None:
            return None
        f = finding
        return _digest(self.server, f.file, digest, f.line, f.col, f.category, f.text)

    def get_many(self, keys: list[str]) -> dict[str, KnownAnswer]:
        return self._store().get_many(keys) if keys and self.enabled else {}

    def put(self, answers: dict[str, KnownAnswer]) -> None:
        if not self.enabled or not answers:
            return
        store = self._store()
        for key, known in answers.items():
            store.add(key, known)
        store.flush()

    def _store(self) -> PayloadCache[KnownAnswer]:
        if self._cache is None:
            self._cache = PayloadCache("semantic", KnownAnswer, _BUILDERS, enabled=self.enabled)
        return self._cache


def _server_identity(binary: str, indexing: bool) -> str | None:
    """The binary's real path, size and mtime, and the index mode; None when it is gone."""
    try:
        st = os.stat(binary)
    except OSError:
        return None
    mode = "indexed" if indexing else "not indexed"
    return _digest(os.path.realpath(binary), st.st_size, st.st_mtime_ns, mode)


def _digest(*parts: object) -> str:
    return hashlib.blake2b(
        "\0".join(map(str, parts)).encode(errors="surrogateescape"), digest_size=16
    ).hexdigest()
